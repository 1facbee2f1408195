package cloudcreds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// runCredentialHelper runs a program that prints credentials (an AWS
// credential_process, the AWS CLI, gcloud) with env added to darman's
// environment, stops it and what it started after timeout or when ctx
// ends, and gives what it printed. Its error completes a sentence that
// names the program ("failed (exit status 1): why"); said is the end of
// what it wrote to stderr, for the caller's advice.
func runCredentialHelper(ctx context.Context, what string, argv, env []string, timeout time.Duration) (stdout []byte, said string, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	// A group of its own, so that what it starts is stopped with it.
	p, err := child.Start(cmd, child.Options{Name: what + ": " + strings.Join(argv, " ")})
	if err != nil {
		return nil, "", fmt.Errorf("could not start (%v)", err)
	}
	var out, errs bytes.Buffer
	var read sync.WaitGroup
	read.Go(func() { io.Copy(&limitedBuffer{b: &out, n: 64 << 10}, p.Stdout) })
	read.Go(func() { io.Copy(&limitedBuffer{b: &errs, n: 64 << 10}, p.Stderr) })
	select {
	case <-p.Exited():
	case <-ctx.Done():
	}
	// What is left of its group (all of it, when the call ended first).
	p.Stop(time.Second)
	read.Wait()
	p.Stdout.Close()
	p.Stderr.Close()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, "", fmt.Errorf("did not finish within %s", timeout)
	}
	if code, sig := p.ExitCode(); code != 0 || sig != "" {
		msg := fmt.Sprintf("failed (exit status %d)", code)
		if sig != "" {
			msg = "failed (" + sig + ")"
		}
		// The end of what it wrote says why (the AWS CLI writes its usage
		// first).
		lines := strings.Split(strings.TrimSpace(errs.String()), "\n")
		said = strings.TrimSpace(strings.Join(lines[max(0, len(lines)-3):], " "))
		if said != "" {
			msg += ": " + said
		}
		return nil, said, errors.New(msg)
	}
	return out.Bytes(), "", nil
}

// limitedBuffer keeps the first n bytes written to it and drops the rest.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
