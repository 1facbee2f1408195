package cloudcreds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
)

// Where only the metadata server can tell (Windows), a server that does
// not answer means no credentials, with what was tried; one that answers
// is Google Cloud's, and its refusal is reported as such.
func TestVertexMetadataProbe(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(gone.URL)
	gone.Close()
	g := &GCP{provider: "Google Vertex AI"}
	g.useMetadata(u.Host, "a Windows machine, perhaps on Compute Engine", gcpProbeTimeout, func(err error) error {
		return &llm.Error{Kind: llm.ErrMissingKey, Provider: g.provider, Message: "nothing at " + u.Host + ": " + err.Error()}
	})
	for range 2 {
		_, err := g.Token(context.Background())
		if want := "no API key for Google Vertex AI: nothing at " + u.Host + ": Get \"http://" + u.Host; !errors.Is(err, llm.ErrMissingKey) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %v\nwant one starting %s", err, want)
		}
	}
	// Google's metadata server, without a service account for the machine.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Metadata-Flavor", "Google")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "The service account was not found.\n")
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	g.useMetadata(host, "a Windows machine, perhaps on Compute Engine", gcpProbeTimeout, func(err error) error {
		t.Errorf("Google's metadata server taken for none: %v", err)
		return err
	})
	if _, err := g.Token(context.Background()); !errors.Is(err, llm.ErrAuth) || !strings.Contains(err.Error(), "answered 404: The service account was not found.") {
		t.Errorf("error %v, want the server's refusal", err)
	}
}
