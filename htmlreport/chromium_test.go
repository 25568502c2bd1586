package htmlreport

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"
)

// chromium finds a Chromium or Chrome: $CHROMIUM, else the usual names.
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReportInChromium loads a report in headless Chromium and checks what
// a person would see: the charts and tables render (element counts, the
// SVG has a size), no console error or exception, no request leaves the
// file (the report is self-contained), and the screenshot really shows
// the exercised (green) and never-exercised (red) transitions. The
// screenshot is kept in $TRACECHECK_ARTIFACTS when set.
func TestReportInChromium(t *testing.T) {
	exe := chromium()
	if exe == "" {
		t.Skip("SKIPPED: no Chromium found (set CHROMIUM, or apt-get install chromium; .ci/run installs it): the HTML report was NOT checked in a browser")
	}
	// Runs last: the browser and chromedp's goroutines are gone once the
	// contexts below are cancelled.
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var html bytes.Buffer
	run := sample()
	if err := Write(&html, run); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, "console "+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
				problems = append(problems, "request outside the file: "+u)
			}
		case *network.EventLoadingFailed:
			problems = append(problems, "loading failed: "+ev.ErrorText)
		}
	})
	if err != nil {
		t.Fatalf("chromium %s: %v", exe, err)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("chromium: network.enable: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible("svg.chart")); err != nil {
		t.Fatalf("chromium: loading the report: %v", err)
	}
	num := func(expr string) float64 {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[float64](expr))
		if err != nil {
			t.Fatalf("chromium: %s: %v", expr, err)
		}
		return v
	}
	edges := int(num(`document.querySelectorAll("svg.chart g.edge").length`))
	states := int(num(`document.querySelectorAll("svg.chart g.state").length`))
	stageRows := int(num(`document.querySelectorAll("#stages tbody tr").length`))
	transitionRows := int(num(`document.querySelectorAll("table.transitions tbody tr").length`))
	killRows := int(num(`document.querySelectorAll("#kills tbody tr").length`))
	svgW := num(`document.querySelector("svg.chart").getBoundingClientRect().width`)
	svgH := num(`document.querySelector("svg.chart").getBoundingClientRect().height`)
	verdict, err := chromedp.Run(bctx, chromedp.Text("#verdict"))
	if err != nil {
		t.Fatalf("chromium: verdict: %v", err)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	c := run.Charts[0]
	if edges != len(c.Edges) || states != 3 {
		t.Errorf("chart: %d edges, %d states rendered; want %d and 3", edges, states, len(c.Edges))
	}
	if stageRows != len(run.Stages) || transitionRows != len(c.Edges)+len(c.NotRequired) || killRows != len(run.Kills) {
		t.Errorf("tables: %d stage rows, %d transition rows, %d kill rows; want %d, %d, %d",
			stageRows, transitionRows, killRows, len(run.Stages), len(c.Edges)+len(c.NotRequired), len(run.Kills))
	}
	if svgW < 200 || svgH < 100 {
		t.Errorf("the chart renders %.0f×%.0f: too small to be drawn", svgW, svgH)
	}
	if verdict != "FAIL" {
		t.Errorf("verdict badge reads %q", verdict)
	}
	mu.Lock()
	for _, p := range problems {
		t.Error(p)
	}
	mu.Unlock()

	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	green, red := colourPixels(img)
	if green < 200 || red < 100 {
		t.Errorf("screenshot shows %d green and %d red pixels: the coverage colours did not render", green, red)
	}
	out := dir
	if a := os.Getenv("TRACECHECK_ARTIFACTS"); a != "" {
		out = a
	}
	if err := os.WriteFile(filepath.Join(out, "report-screenshot.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("chromium %s: %d edges, %d states, %d green and %d red pixels; screenshot %s",
		filepath.Base(exe), edges, states, green, red, filepath.Join(out, "report-screenshot.png"))
}

// colourPixels counts the pixels close to the report's exercised green
// (#1e8449) and never-exercised red (#c0392b).
func colourPixels(img image.Image) (green, red int) {
	near := func(r, g, b uint32, R, G, B int) bool {
		d := func(x uint32, y int) int { v := int(x>>8) - y; return v * v }
		return d(r, R)+d(g, G)+d(b, B) < 40*40
	}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			switch {
			case near(r, g, b, 0x1e, 0x84, 0x49):
				green++
			case near(r, g, b, 0xc0, 0x39, 0x2b):
				red++
			}
		}
	}
	return green, red
}
