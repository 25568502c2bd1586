package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// A program writes its checkpoint into $TRACECHECK_STAGING_DIR and a passing
// evaluation into $TRACECHECK_EVAL_FILE; the publisher stages, verifies and
// publishes it atomically, one journal receipt per transition.
func ExamplePublish() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	program := `echo weights > "$TRACECHECK_STAGING_DIR/model.bin" && echo '{"passed": true}' > "$TRACECHECK_EVAL_FILE"`
	res, err := checkpoint.Publish(context.Background(), checkpoint.Config{
		PublishDir: filepath.Join(dir, "published"),
		Name:       "model",
		Command:    []string{"sh", "-c", program},
	})
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println(res.Outcome, res.Actions)
	fmt.Println(filepath.Base(res.Checkpoint), len(res.Manifest.Files), "file,", res.Manifest.Bytes(), "bytes")
	// Output:
	// Published [ExecutePython ProgramSucceeds ReloadAndVerify AtomicPublication]
	// model 1 file, 8 bytes
}

// A checkpoint name is one safe path element.
func ExampleValidateName() {
	fmt.Println(checkpoint.ValidateName("linreg-v2"))
	fmt.Println(checkpoint.ValidateName("../etc"))
	// Output:
	// <nil>
	// invalid checkpoint name: "../etc" contains "/"
}
