package session_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

// A question answered after three minutes, with every timeout as darman
// ships it (the write tool's 30 s), in a synctest bubble's time: the wait
// is the person's, so the write runs once allowed and the file changes.
// The turn is darman's loop with the built-in tools, the real permission
// checker and the real store; only the person is the test's.
func TestPermissionAnsweredAfterThreeMinutes(t *testing.T) {
	model := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: []byte(`{"path":"notes.txt"}`)}}},
		{ToolCalls: []llmtest.ToolCall{{Name: "write", Arguments: []byte(`{"path":"notes.txt","content":"new\n"}`)}}},
		{Text: "Rewritten."},
	}})
	st := openOutside(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		client, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: model.URL, APIKey: "sk-ant-test-key-0000"}, &provider.Options{
			Retry: llm.RetryPolicy{MaxAttempts: 1},
			// A pooled connection's reader waits on the network, which
			// would hold the bubble's time still.
			HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var asked []permission.Request
		svc, err := session.New(session.Options{
			Store:     st,
			Models:    func(string) (llm.Provider, string, error) { return client, "claude-sonnet-4-5", nil },
			Workspace: tool.NewDisk(root),
			Tools:     tool.Builtins(tool.Options{NoRipgrep: true}),
			Rules:     permission.Defaults(),
			Asker:     slowPerson{&asked},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		sess, err := svc.Create(t.Context(), session.CreateOptions{Model: "anthropic/claude-sonnet-4-5"})
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		msg, err := svc.Run(t.Context(), session.Turn{Session: sess.ID, Prompt: session.Text("rewrite notes.txt")})
		if err != nil {
			t.Fatal(err)
		}
		if msg.Finish != agent.FinishStop || len(asked) != 1 || asked[0].Permission != permission.Edit {
			t.Errorf("finish %q (%s), asked %+v; want one edit question and a finished turn", msg.Finish, msg.Error, asked)
		}
		if took := time.Since(began); took < 3*time.Minute {
			t.Errorf("the turn took %s of the bubble's time, less than the question", took)
		}
		if got, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(got) != "new\n" {
			t.Errorf("notes.txt holds %q after the write was allowed, want %q; the model was told: %s", got, "new\n",
				model.ModelCalls()[2].Get("messages.4.content.0.content.0.text"))
		}
	})
}

// slowPerson allows what it is asked after three minutes of reading.
type slowPerson struct{ asked *[]permission.Request }

func (p slowPerson) Ask(ctx context.Context, req permission.Request) (permission.Reply, error) {
	*p.asked = append(*p.asked, req)
	select {
	case <-time.After(3 * time.Minute):
		return permission.Reply{Answer: permission.AllowOnce}, nil
	case <-ctx.Done():
		return permission.Reply{}, ctx.Err()
	}
}

// outside is the session store run from outside the test's synctest
// bubble: badger's goroutines and the socket the store serves other
// processes on wait on the network and the disk, which would hold the
// bubble's time still, and badger's WaitGroups may not cross its border.
// Each call goes to a goroutine outside, one at a time.
type outside struct {
	st    *store.Store
	calls chan func()
}

// openOutside opens a store in a temporary directory; call it before the
// bubble.
func openOutside(t *testing.T) *outside {
	st, err := store.Open(context.Background(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := &outside{st: st, calls: make(chan func())}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range o.calls {
			f()
		}
	}()
	t.Cleanup(func() {
		close(o.calls)
		<-done
		st.Close()
	})
	return o
}

// run runs f outside the bubble and waits for it. A mutex, unlike a
// channel or a WaitGroup, may be unlocked from outside.
func run[T any](o *outside, ctx context.Context, f func(ctx context.Context) (T, error)) (T, error) {
	var (
		mu  sync.Mutex
		v   T
		err error
	)
	ctx = context.WithoutCancel(ctx)
	mu.Lock()
	o.calls <- func() { v, err = f(ctx); mu.Unlock() }
	mu.Lock()
	return v, err
}

func (o *outside) do(ctx context.Context, f func(ctx context.Context) error) error {
	_, err := run(o, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

func (o *outside) PutSession(ctx context.Context, s agent.Session) error {
	return o.do(ctx, func(ctx context.Context) error { return o.st.PutSession(ctx, s) })
}

func (o *outside) Session(ctx context.Context, id agent.ID) (agent.Session, error) {
	return run(o, ctx, func(ctx context.Context) (agent.Session, error) { return o.st.Session(ctx, id) })
}

func (o *outside) PutMessage(ctx context.Context, m agent.Message) error {
	return o.do(ctx, func(ctx context.Context) error { return o.st.PutMessage(ctx, m) })
}

func (o *outside) PutPart(ctx context.Context, p agent.Part) error {
	return o.do(ctx, func(ctx context.Context) error { return o.st.PutPart(ctx, p) })
}

func (o *outside) AppendPart(ctx context.Context, p agent.Part, seq int, text string) error {
	return o.do(ctx, func(ctx context.Context) error { return o.st.AppendPart(ctx, p, seq, text) })
}

func (o *outside) Messages(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error) {
	return run(o, ctx, func(ctx context.Context) ([]agent.MessageWithParts, error) { return o.st.Messages(ctx, id) })
}

func (o *outside) Window(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error) {
	return run(o, ctx, func(ctx context.Context) ([]agent.MessageWithParts, error) { return o.st.Window(ctx, id) })
}

func (o *outside) PutBlob(ctx context.Context, id agent.ID, data []byte) (string, error) {
	return run(o, ctx, func(ctx context.Context) (string, error) { return o.st.PutBlob(ctx, id, data) })
}

func (o *outside) Blob(ctx context.Context, id agent.ID, key string) ([]byte, error) {
	return run(o, ctx, func(ctx context.Context) ([]byte, error) { return o.st.Blob(ctx, id, key) })
}
