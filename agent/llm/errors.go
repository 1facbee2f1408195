package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"
)

// Kind classifies what went wrong with a model call. Each Kind is also an
// error value, so that errors.Is(err, llm.ErrContextTooLong) is true for
// every [*Error] of that kind.
type Kind uint8

const (
	// ErrOther is a failure darman does not classify further.
	ErrOther Kind = iota
	// ErrMissingKey: no API key was configured or found in the environment.
	ErrMissingKey
	// ErrAuth: the API rejected the key (401).
	ErrAuth
	// ErrPermission: the key may not use this model or endpoint (403).
	ErrPermission
	// ErrBilling: the account cannot pay (402, or a quota error).
	ErrBilling
	// ErrUnknownModel: the API does not know the model id.
	ErrUnknownModel
	// ErrNotFound: no such endpoint, usually a wrong base URL.
	ErrNotFound
	// ErrContextTooLong: the request does not fit the context window; the
	// caller can compact the conversation and try again.
	ErrContextTooLong
	// ErrBadRequest: the API rejected the request as invalid.
	ErrBadRequest
	// ErrRateLimited: 429.
	ErrRateLimited
	// ErrOverloaded: 529 or Anthropic's overloaded_error.
	ErrOverloaded
	// ErrServer: a 5xx from the API.
	ErrServer
	// ErrTimeout: 408 from the API.
	ErrTimeout
	// ErrConflict: 409 from the API.
	ErrConflict
	// ErrUnreachable: the server could not be reached at all (refused, no
	// such host).
	ErrUnreachable
	// ErrNetwork: the connection failed after it was made.
	ErrNetwork
	// ErrStalled: the stream sent nothing for the idle timeout.
	ErrStalled
	// ErrStreamCut: the stream ended before the answer was complete.
	ErrStreamCut
	// ErrMalformed: the API sent something that is not its wire format.
	ErrMalformed
	// ErrCanceled: the caller cancelled the call.
	ErrCanceled
)

var kindNames = [...]string{
	ErrOther:          "model call failed",
	ErrMissingKey:     "no API key",
	ErrAuth:           "API key rejected",
	ErrPermission:     "permission denied",
	ErrBilling:        "billing problem",
	ErrUnknownModel:   "unknown model",
	ErrNotFound:       "endpoint not found",
	ErrContextTooLong: "context too long",
	ErrBadRequest:     "bad request",
	ErrRateLimited:    "rate limited",
	ErrOverloaded:     "overloaded",
	ErrServer:         "server error",
	ErrTimeout:        "request timeout",
	ErrConflict:       "conflict",
	ErrUnreachable:    "server unreachable",
	ErrNetwork:        "network error",
	ErrStalled:        "stream stalled",
	ErrStreamCut:      "stream cut",
	ErrMalformed:      "malformed response",
	ErrCanceled:       "canceled",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Error makes every Kind usable as an errors.Is target.
func (k Kind) Error() string { return "llm: " + k.String() }

// retryable reports whether a call that failed this way may succeed when
// sent again unchanged.
func (k Kind) retryable() bool {
	switch k {
	case ErrRateLimited, ErrOverloaded, ErrServer, ErrTimeout, ErrConflict,
		ErrNetwork, ErrStalled, ErrStreamCut:
		return true
	}
	return false
}

// Error is a failed model call, with what a human needs to fix it.
type Error struct {
	Kind Kind
	// Provider is the provider's display name: "Anthropic", "OpenAI",
	// "Ollama", or the configured name of a custom server.
	Provider string
	// Model is the model id of the call, when there was one.
	Model string
	// Status is the HTTP status; zero when there was no response, or for
	// an error event inside a stream.
	Status int
	// Type is the API's own error type or code ("overloaded_error",
	// "context_length_exceeded"), when it sent one.
	Type string
	// Message is the API's explanation, or what darman saw.
	Message string
	// URL is the endpoint darman tried.
	URL string
	// KeySource says where the key came from ("ANTHROPIC_API_KEY",
	// "provider.anthropic.apiKey"), for errors about the key.
	KeySource string
	// RetryAfter is how long the server asked to wait; zero when it did not.
	RetryAfter time.Duration
	// Idle is the idle timeout that a stalled stream exceeded.
	Idle time.Duration
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, kind) true for an Error of that kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

func (e *Error) status() string {
	if e.Status == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d)", e.Status)
}

func (e *Error) detail() string {
	switch {
	case e.Message != "":
		return ": " + e.Message
	case e.Err != nil:
		return ": " + e.Err.Error()
	}
	return ""
}

func (e *Error) api() string {
	if e.Provider == "" {
		return "the model API"
	}
	return "the " + e.Provider + " API"
}

// Short is the reason in a few words: "rate limited (429)".
func (e *Error) Short() string {
	if e == nil {
		return "unknown error"
	}
	return e.Kind.String() + e.status()
}

func (e *Error) Error() string {
	switch e.Kind {
	case ErrMissingKey:
		if e.Message != "" {
			// What was looked for and what to do, in full (Bedrock's AWS
			// credentials).
			return fmt.Sprintf("no API key for %s: %s", e.Provider, e.Message)
		}
		return fmt.Sprintf("no API key for %s: set %s", e.Provider, e.KeySource)
	case ErrAuth:
		if e.KeySource == "" {
			return fmt.Sprintf("%s rejected the request's credentials%s%s", e.api(), e.status(), e.detail())
		}
		return fmt.Sprintf("%s rejected the key from %s%s%s", e.api(), e.KeySource, e.status(), e.detail())
	case ErrPermission:
		return fmt.Sprintf("%s refused access%s%s", e.api(), e.status(), e.detail())
	case ErrBilling:
		return fmt.Sprintf("%s refused the request for billing reasons%s%s", e.api(), e.status(), e.detail())
	case ErrUnknownModel:
		return fmt.Sprintf("%s does not know the model %q%s%s; check the model id in darman's config",
			e.api(), e.Model, e.status(), e.detail())
	case ErrNotFound:
		return fmt.Sprintf("%s has no endpoint at %s%s%s; check the provider's baseURL", e.api(), e.URL, e.status(), e.detail())
	case ErrContextTooLong:
		return fmt.Sprintf("the conversation does not fit %q's context window%s%s", e.Model, e.status(), e.detail())
	case ErrBadRequest:
		return fmt.Sprintf("%s rejected the request%s%s", e.api(), e.status(), e.detail())
	case ErrRateLimited:
		return fmt.Sprintf("%s is rate limiting requests%s%s", e.api(), e.status(), e.detail())
	case ErrOverloaded:
		return fmt.Sprintf("%s is overloaded%s%s", e.api(), e.status(), e.detail())
	case ErrServer:
		return fmt.Sprintf("%s failed%s%s", e.api(), e.status(), e.detail())
	case ErrTimeout:
		return fmt.Sprintf("%s timed out the request%s%s", e.api(), e.status(), e.detail())
	case ErrConflict:
		return fmt.Sprintf("%s reported a conflict%s%s", e.api(), e.status(), e.detail())
	case ErrUnreachable:
		return fmt.Sprintf("cannot reach %s at %s%s", e.api(), e.URL, e.detail())
	case ErrNetwork:
		return fmt.Sprintf("the connection to %s at %s failed%s", e.api(), e.URL, e.detail())
	case ErrStalled:
		return fmt.Sprintf("%s sent nothing for %s, so darman gave up on the stream (raise the provider's timeout to wait longer)",
			e.api(), HumanDuration(e.Idle))
	case ErrStreamCut:
		return fmt.Sprintf("%s stream ended before the answer was complete%s", e.api(), e.detail())
	case ErrMalformed:
		return fmt.Sprintf("%s sent a response darman cannot read%s", e.api(), e.detail())
	case ErrCanceled:
		return "the model call was canceled"
	}
	return fmt.Sprintf("%s call failed%s%s", e.api(), e.status(), e.detail())
}

// transportError classifies an error that came without an HTTP response:
// cancellation, darman's own stall and stream errors, and network failures.
// It returns nil for anything else.
func transportError(err error, ctx context.Context, base *Error) *Error {
	var own *Error
	if errors.As(err, &own) {
		return own
	}
	if ctx.Err() != nil {
		e := *base
		e.Kind, e.Err = ErrCanceled, context.Cause(ctx)
		return &e
	}
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.URL != "" {
		base.URL = uerr.URL
	}
	var nerr net.Error
	var operr *net.OpError
	var dnserr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &dnserr),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		e := *base
		e.Kind, e.Err = ErrUnreachable, err
		return &e
	case errors.As(err, &operr), errors.As(err, &nerr), errors.As(err, &uerr),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e := *base
		e.Kind, e.Err = ErrNetwork, err
		return &e
	}
	return nil
}
