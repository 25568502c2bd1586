package checkpoint

import (
	"encoding/json"
	"fmt"
)

// The details of the journal's receipts: each receipt's "detail" object
// (docs/trace-format.md) is one of these, by action. They are the journal
// format's documentation: what a receipt of each transition records.

// InitDetail is the detail of the Init receipt: the run, before anything
// ran.
type InitDetail struct {
	Run        string   `json:"run"`
	Name       string   `json:"name"`
	PublishDir string   `json:"publish_dir"`
	StagingDir string   `json:"staging_dir"`
	RunDir     string   `json:"run_dir"`
	Command    []string `json:"command"`
}

// ExecuteDetail is the detail of the ExecutePython receipt: the program's
// process, or why it could not start.
type ExecuteDetail struct {
	PID     int      `json:"pid,omitempty"`
	Command []string `json:"command"`
	Error   string   `json:"error,omitempty"`
}

// SucceedDetail is the detail of the ProgramSucceeds receipt: the
// program's exit and its evaluation result, whole (Eval) up to 64 KiB, by
// its SHA-256 and length beyond (the manifest records it whole).
type SucceedDetail struct {
	ExitCode   int             `json:"exit_code"`
	Eval       json.RawMessage `json:"eval,omitempty"`
	EvalSHA256 string          `json:"eval_sha256,omitempty"`
	EvalBytes  int             `json:"eval_bytes,omitempty"`
	// OrphansKilled counts the program's descendants that outlived it and
	// were killed before staging.
	OrphansKilled int `json:"orphans_killed,omitempty"`
}

// VerifiedDetail is the detail of the ReloadAndVerify receipt: the
// checkpoint verified, by its digest. Recovery and inspect compare a
// published checkpoint's manifest with it.
type VerifiedDetail struct {
	Digest string `json:"digest"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
}

// PublishedDetail is the detail of the AtomicPublication receipt. Durable
// is false (and Error says why) if the publish directory's fsync after the
// rename failed: the run is published all the same.
type PublishedDetail struct {
	Path    string `json:"path"`
	Digest  string `json:"digest"`
	Durable bool   `json:"durable"`
	Error   string `json:"error,omitempty"`
}

// EndDetail is the detail of the receipts that end a run without
// publishing (ExecutionFails, SaveOrVerificationFails, PublicationFails,
// Interrupt, InterruptBeforePublication): why, whether the staging
// directory was removed, and how the program ended when it had just run.
type EndDetail struct {
	*ProcessEnd
	Error          string `json:"error"`
	StagingRemoved bool   `json:"staging_removed"`
	StagingError   string `json:"staging_error,omitempty"`
	// StderrTail is the end of the program's stderr, when it failed.
	StderrTail string `json:"stderr_tail,omitempty"`
}

// ProcessEnd is how the program's process ended, in an [EndDetail].
type ProcessEnd struct {
	PID               int    `json:"pid"`
	ExitCode          int    `json:"exit_code"`
	Signal            string `json:"signal,omitempty"`
	SigkillAfterGrace bool   `json:"sigkill_after_grace,omitempty"`
	OrphansKilled     int    `json:"orphans_killed,omitempty"`
}

// processEnd describes how e ended.
func processEnd(e Exit) *ProcessEnd {
	return &ProcessEnd{PID: e.PID, ExitCode: e.Code, Signal: e.Signal, SigkillAfterGrace: e.Killed, OrphansKilled: len(e.Orphans)}
}

// detailMap turns a receipt detail into the trace event's detail object.
func detailMap(d any) (map[string]any, error) {
	if d == nil {
		return nil, nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode receipt detail: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encode receipt detail: %w", err)
	}
	return m, nil
}

// ReceiptDetail decodes the detail of the last receipt of action in s into
// T (one of the *Detail types). ok is false if there is no such receipt or
// its detail does not decode.
func ReceiptDetail[T any](s *JournalSummary, action string) (d T, ok bool) {
	m, found := s.Receipt(action)
	if !found {
		return d, false
	}
	b, err := json.Marshal(m)
	if err != nil || json.Unmarshal(b, &d) != nil {
		return d, false
	}
	return d, true
}
