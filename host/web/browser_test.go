package web

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/zkhost/zkhost/host/metrics"
	"github.com/zkhost/zkhost/host/web/headless"
)

// TestPageInChromium loads the status page from a live handler in headless
// Chromium, lets its script poll, and reads the rendered DOM: pipeline counts,
// device cards with busy graphs, queues, jobs (escaped), the budget gauge. It
// saves a screenshot; ZKHOST_UPDATE_SCREENSHOT=1 writes it to
// docs/status-page.png.
func TestPageInChromium(t *testing.T) {
	b := headless.ForTest(t)
	svc := newFake(time.Now())
	srv := serveFake(t, svc)
	doc, dom := b.Document(t, srv.URL+"/")
	body := headless.FindNode(doc, func(n *html.Node) bool { return n.Data == "body" })
	if n, _ := strconv.Atoi(headless.Attr(body, "data-updates")); n < 1 {
		t.Fatalf("the page rendered no status (data-updates=%q); DOM:\n%s", headless.Attr(body, "data-updates"), first(string(dom)))
	}
	wantPipeline := map[string]string{"queued": "3", "synthesizing": "1", "staged": "1", "proving": "2", "finalizing": "0", "verified": "1"}
	for phase, n := range wantPipeline {
		st := headless.FindNode(doc, func(x *html.Node) bool { return headless.Attr(x, "data-phase") == phase })
		if st == nil || !strings.HasPrefix(headless.Text(st), n) {
			t.Errorf("pipeline %s shows %q, want %s", phase, headless.Text(st), n)
		}
	}
	for _, dev := range []struct{ name, busy string }{{"dev0", "92%"}, {"dev1", "45%"}} {
		card := headless.FindNode(doc, func(x *html.Node) bool { return headless.Attr(x, "data-device") == dev.name })
		if card == nil {
			t.Errorf("no card for %s", dev.name)
			continue
		}
		busy := headless.FindNode(card, func(x *html.Node) bool { return headless.Attr(x, "class") == "busy" })
		if headless.Text(busy) != dev.busy {
			t.Errorf("%s busy %q, want %s", dev.name, headless.Text(busy), dev.busy)
		}
		area := headless.FindNode(card, func(x *html.Node) bool { return x.Data == "path" && headless.Attr(x, "class") == "area" })
		if area == nil || strings.Count(headless.Attr(area, "d"), "L") < 2*metrics.HistoryLength {
			t.Errorf("%s has no busy graph over the history", dev.name)
		}
	}
	rows := headless.FindAll(doc, func(x *html.Node) bool { return x.Data == "tr" && headless.Attr(x, "data-job") != "" })
	if len(rows) != 4 {
		t.Errorf("%d job rows, want 4", len(rows))
	}
	if strings.Contains(string(dom), "<script>x</script>") || !strings.Contains(headless.Text(body), "<script>x</script>") {
		t.Error("a job error was not shown as text")
	}
	if q := headless.FindNode(doc, func(x *html.Node) bool { return headless.Attr(x, "data-class") == "normal" }); q == nil || !strings.Contains(headless.Text(q), "13") {
		t.Errorf("normal queue row %q, want 1 job and 3 partitions", headless.Text(q))
	}
	if g := headless.FindNode(doc, func(x *html.Node) bool { return x.Data == "svg" && headless.Attr(x, "class") == "gauge" }); g == nil || !strings.Contains(headless.Text(g), "23%") {
		t.Errorf("budget gauge %q, want 23%%", headless.Text(g))
	}

	shot := filepath.Join(t.TempDir(), "status-page.png")
	if os.Getenv("ZKHOST_UPDATE_SCREENSHOT") == "1" {
		shot = filepath.Join("..", "..", "docs", "status-page.png")
	}
	if err := b.Screenshot(context.Background(), srv.URL+"/", shot, 1400, 1000); err != nil {
		t.Fatal(err)
	}
	png, _ := os.ReadFile(shot)
	if !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 20000 {
		t.Errorf("screenshot %s is not a rendered page (%d bytes)", shot, len(png))
	}
}

// TestPageAsksForToken: behind a token, a browser gets a login form and none
// of the page.
func TestPageAsksForToken(t *testing.T) {
	b := headless.ForTest(t)
	srv := httptest.NewServer(RequireToken(Handler(newFake(time.Now()), nil), []byte("0123456789abcdef0123"), nil))
	defer srv.Close()
	doc, dom := b.Document(t, srv.URL+"/")
	form := headless.FindNode(doc, func(x *html.Node) bool { return headless.Attr(x, "id") == "login" })
	if form == nil || headless.Attr(form, "action") != "/login" {
		t.Errorf("no login form posting to /login:\n%s", dom)
	}
	if box := headless.FindNode(doc, func(x *html.Node) bool { return headless.Attr(x, "id") == "tokenbox" }); box != nil {
		t.Errorf("the page itself was served without a token")
	}
}
