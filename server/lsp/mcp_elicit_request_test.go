package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
)

var optInElicitation = map[string]any{"elicitation": true}

// answerElicit answers darman/elicit with result and everything else as
// answerButtons does.
func answerElicit(result any) answerFunc {
	buttons, _ := answerButtons("Decline")
	return func(method string, params json.RawMessage) (any, error) {
		if method == "darman/elicit" {
			return result, nil
		}
		return buttons(method, params)
	}
}

func ptr(f float64) *float64 { return &f }

var profileForm = permission.Elicitation{Server: "crm", Mode: "form", Message: "Who are you?", Fields: []permission.ElicitField{
	{Name: "age", Type: "integer", Required: true, Minimum: ptr(0), Maximum: ptr(150)},
	{Name: "name", Title: "Your name", Type: "string", Required: true, Default: "Ada"},
	{Name: "newsletter", Type: "boolean"},
	{Name: "team", Type: "string", Enum: []string{"red", "blue"}},
}}

func TestElicitRequestAcceptsTypedValues(t *testing.T) {
	g, c := gateEnvCaps(t, answerElicit(map[string]any{"action": "accept",
		"content": map[string]any{"age": 36, "name": "Grace", "team": "blue", "newsletter": nil}}), nil, optInElicitation, wait)
	ans, err := g.Elicit(context.Background(), profileForm)
	want := map[string]any{"age": 36.0, "name": "Grace", "team": "blue"}
	if err != nil || ans.Action != "accept" || !reflect.DeepEqual(ans.Content, want) {
		t.Fatalf("Elicit = %+v, %v; want accept with %v (the null newsletter left out)", ans, err, want)
	}
	asked := c.All("darman/elicit")
	if len(asked) != 1 {
		t.Fatalf("darman/elicit sent %d times", len(asked))
	}
	var p struct {
		RequestID, Server, Mode, Message string
		Fields                           []map[string]any
	}
	if err := json.Unmarshal(asked[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.RequestID, "elicit_") || p.Server != "crm" || p.Mode != "form" || p.Message != "Who are you?" || len(p.Fields) != 4 {
		t.Errorf("darman/elicit params %s", asked[0].Params)
	}
	if age := p.Fields[0]; age["type"] != "integer" || age["required"] != true || age["minimum"] != 0.0 || age["maximum"] != 150.0 {
		t.Errorf("age field %v; want integer, required, in [0, 150]", age)
	}
	if name := p.Fields[1]; name["title"] != "Your name" || name["default"] != "Ada" {
		t.Errorf("name field %v; want its title and default", name)
	}
	if n := len(c.All("window/showMessageRequest")); n != 0 {
		t.Errorf("%d showMessageRequest sent to a client that opted in", n)
	}
}

func TestElicitRequestDeclineAndCancel(t *testing.T) {
	for _, action := range []string{"decline", "cancel"} {
		g, _ := gateEnvCaps(t, answerElicit(map[string]any{"action": action, "content": map[string]any{"name": "x"}}), nil, optInElicitation, wait)
		ans, err := g.Elicit(context.Background(), profileForm)
		if err != nil || ans.Action != action || ans.Content != nil {
			t.Errorf("client answered %s: Elicit = %+v, %v", action, ans, err)
		}
	}
}

func TestElicitRequestWrongAnswersAreDeclined(t *testing.T) {
	for _, tc := range []struct {
		content map[string]any
		why     string
	}{
		{map[string]any{"age": "36", "name": "Grace"}, `age`},
		{map[string]any{"age": 36.5, "name": "Grace"}, `not an integer`},
		{map[string]any{"age": 200, "name": "Grace"}, `outside [0, 150]`},
		{map[string]any{"age": 36}, `required field \"name\"`},
		{map[string]any{"age": 36, "name": "Grace", "team": "green"}, `not one of`},
		{map[string]any{"age": 36, "name": "Grace", "admin": true}, `does not ask for`},
	} {
		g, c := gateEnvCaps(t, answerElicit(map[string]any{"action": "accept", "content": tc.content}), nil, optInElicitation, wait)
		ans, err := g.Elicit(context.Background(), profileForm)
		if err != nil || ans.Action != "decline" || ans.Content != nil {
			t.Errorf("content %v: Elicit = %+v, %v; want decline", tc.content, ans, err)
			continue
		}
		msg, _ := c.Await(0, "the explanation", isMethod("window/showMessage"))
		if !strings.Contains(string(msg.Params), tc.why) || !strings.Contains(string(msg.Params), "crm") {
			t.Errorf("content %v: showMessage %s; want it to say %s", tc.content, msg.Params, tc.why)
		}
	}
	g, _ := gateEnvCaps(t, answerElicit(map[string]any{"action": "maybe"}), nil, optInElicitation, wait)
	if ans, err := g.Elicit(context.Background(), profileForm); err != nil || ans.Action != "decline" {
		t.Errorf("unknown action: Elicit = %+v, %v; want decline", ans, err)
	}
}

func TestElicitRequestURL(t *testing.T) {
	g, c := gateEnvCaps(t, answerElicit(map[string]any{"action": "accept"}), nil, optInElicitation, wait)
	ans, err := g.Elicit(context.Background(), permission.Elicitation{Server: "auth", Mode: "url", Message: "Sign in", URL: "https://auth.example.com/x"})
	if err != nil || ans.Action != "accept" {
		t.Fatalf("Elicit = %+v, %v", ans, err)
	}
	asked := c.All("darman/elicit")
	if len(asked) != 1 || !strings.Contains(string(asked[0].Params), `"url":"https://auth.example.com/x"`) || !strings.Contains(string(asked[0].Params), `"mode":"url"`) {
		t.Errorf("darman/elicit %v", asked)
	}
	if n := len(c.All("window/showDocument")); n != 0 {
		t.Errorf("darman opened the URL itself (%d showDocument); the client that opted in opens it", n)
	}
}

// A turn that ends while the client shows the form cancels the request.
func TestElicitRequestCancelled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	g, c := gateEnvCaps(t, func(method string, params json.RawMessage) (any, error) {
		if method == "darman/elicit" {
			<-release
			return map[string]any{"action": "accept"}, nil
		}
		return defaultAnswer(method, params)
	}, nil, optInElicitation, wait)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.Elicit(ctx, profileForm)
		done <- err
	}()
	req, _ := c.Await(0, "darman/elicit", isMethod("darman/elicit"))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Elicit = %v; want context.Canceled (the server is told cancel)", err)
	}
	n, _ := c.Await(0, "$/cancelRequest", isMethod("$/cancelRequest"))
	id, _ := json.Marshal(req.ID)
	if !strings.Contains(string(n.Params), string(id)) {
		t.Errorf("$/cancelRequest %s; want id %s", n.Params, id)
	}
}

// A form nobody answers within the permission timeout is cancelled, and
// the client is told to close it.
func TestElicitRequestTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	g, c := gateEnvCaps(t, func(method string, params json.RawMessage) (any, error) {
		if method == "darman/elicit" {
			<-release
		}
		return defaultAnswer(method, params)
	}, nil, optInElicitation, 100*time.Millisecond)
	ans, err := g.Elicit(context.Background(), profileForm)
	if err != nil || ans.Action != "cancel" {
		t.Errorf("Elicit = %+v, %v; want cancel", ans, err)
	}
	c.Await(0, "$/cancelRequest", isMethod("$/cancelRequest"))
}

// A client that did not opt in is asked with showMessageRequest, and one
// that opted in but answers MethodNotFound falls back to it.
func TestElicitRequestOnlyWithOptIn(t *testing.T) {
	for _, optIns := range []map[string]any{{}, optInElicitation} {
		answer, _ := answerButtons("Answer", "blue")
		g, c := gateEnvCaps(t, answer, nil, optIns, wait)
		ans, err := g.Elicit(context.Background(), permission.Elicitation{Server: "paint", Mode: "form", Message: "Pick",
			Fields: []permission.ElicitField{{Name: "colour", Type: "string", Enum: []string{"red", "blue"}, Required: true}}})
		if err != nil || ans.Action != "accept" || ans.Content["colour"] != "blue" {
			t.Errorf("opt-ins %v: Elicit = %+v, %v", optIns, ans, err)
		}
		if n := len(c.All("window/showMessageRequest")); n != 2 {
			t.Errorf("opt-ins %v: %d showMessageRequest; want 2", optIns, n)
		}
		if n := len(c.All("darman/elicit")); n != len(optIns) {
			t.Errorf("opt-ins %v: %d darman/elicit", optIns, n)
		}
	}
}
