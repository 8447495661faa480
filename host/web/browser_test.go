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
	path, err := headless.Find()
	if err != nil {
		t.Skipf("skipping the browser test: %v", err)
	}
	svc := newFake(time.Now())
	reg, err := metrics.NewRegistry(svc.m, svc)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(svc, reg))
	defer srv.Close()
	b := headless.Browser{Path: path}
	dom, err := b.DumpDOM(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	body := find(doc, func(n *html.Node) bool { return n.Data == "body" })
	if n, _ := strconv.Atoi(attr(body, "data-updates")); n < 1 {
		t.Fatalf("the page rendered no status (data-updates=%q); DOM:\n%s", attr(body, "data-updates"), first(string(dom)))
	}
	wantPipeline := map[string]string{"queued": "3", "synthesizing": "1", "staged": "1", "proving": "2", "finalizing": "0", "verified": "1"}
	for phase, n := range wantPipeline {
		st := find(doc, func(x *html.Node) bool { return attr(x, "data-phase") == phase })
		if st == nil || !strings.HasPrefix(textOf(st), n) {
			t.Errorf("pipeline %s shows %q, want %s", phase, textOf(st), n)
		}
	}
	for _, dev := range []struct{ name, busy string }{{"dev0", "92%"}, {"dev1", "45%"}} {
		card := find(doc, func(x *html.Node) bool { return attr(x, "data-device") == dev.name })
		if card == nil {
			t.Errorf("no card for %s", dev.name)
			continue
		}
		busy := find(card, func(x *html.Node) bool { return attr(x, "class") == "busy" })
		if textOf(busy) != dev.busy {
			t.Errorf("%s busy %q, want %s", dev.name, textOf(busy), dev.busy)
		}
		area := find(card, func(x *html.Node) bool { return x.Data == "path" && attr(x, "class") == "area" })
		if area == nil || strings.Count(attr(area, "d"), "L") < 2*metrics.HistoryLength {
			t.Errorf("%s has no busy graph over the history", dev.name)
		}
	}
	rows := findAll(doc, func(x *html.Node) bool { return x.Data == "tr" && attr(x, "data-job") != "" })
	if len(rows) != 4 {
		t.Errorf("%d job rows, want 4", len(rows))
	}
	if strings.Contains(string(dom), "<script>x</script>") || !strings.Contains(textOf(body), "<script>x</script>") {
		t.Error("a job error was not shown as text")
	}
	if q := find(doc, func(x *html.Node) bool { return attr(x, "data-class") == "normal" }); q == nil || !strings.Contains(textOf(q), "13") {
		t.Errorf("normal queue row %q, want 1 job and 3 partitions", textOf(q))
	}
	if g := find(doc, func(x *html.Node) bool { return x.Data == "svg" && attr(x, "class") == "gauge" }); g == nil || !strings.Contains(textOf(g), "23%") {
		t.Errorf("budget gauge %q, want 23%%", textOf(g))
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

// TestPageAsksForToken: behind a token, the page shows the token form.
func TestPageAsksForToken(t *testing.T) {
	path, err := headless.Find()
	if err != nil {
		t.Skipf("skipping the browser test: %v", err)
	}
	srv := httptest.NewServer(RequireToken(Handler(newFake(time.Now()), nil), []byte("0123456789abcdef0123"), nil))
	defer srv.Close()
	dom, err := headless.Browser{Path: path}.DumpDOM(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := html.Parse(bytes.NewReader(dom))
	box := find(doc, func(x *html.Node) bool { return attr(x, "id") == "tokenbox" })
	if !strings.Contains(attr(box, "style"), "display: block") {
		t.Errorf("token box not shown: %q", attr(box, "style"))
	}
	if n := attr(find(doc, func(x *html.Node) bool { return x.Data == "body" }), "data-updates"); n != "0" {
		t.Errorf("page rendered status without a token (%s updates)", n)
	}
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n == nil {
		return nil
	}
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, match); f != nil {
			return f
		}
	}
	return nil
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
