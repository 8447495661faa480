package headless

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The DOM helpers below read the page the browser built (DumpDOM, parsed with
// html.Parse) in the page tests.

// Document loads url in b for test t and returns the DOM after the page's
// scripts ran, parsed and as the browser printed it, failing t when either
// step fails.
func (b Browser) Document(t testing.TB, url string) (*html.Node, []byte) {
	t.Helper()
	dom, err := b.DumpDOM(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	return doc, dom
}

// Attr returns the value of n's attribute key, or "".
func Attr(n *html.Node, key string) string {
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

// FindNode returns the first element under n (n included, depth first) that match
// accepts, or nil.
func FindNode(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n == nil {
		return nil
	}
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := FindNode(c, match); f != nil {
			return f
		}
	}
	return nil
}

// FindAll returns every element under n that match accepts, in document order.
func FindAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n == nil {
			return
		}
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

// Text returns the text under n, concatenated.
func Text(n *html.Node) string {
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
