package wire

import "net/http"

// Transport is where a wire sends its requests and how: the server, the
// key, the configured headers, the HTTP client and the idle timeout.
type Transport struct {
	BaseURL string
	Key     string
	Headers map[string]string
	HTTP    *http.Client
	Idle    IdleWatch
}
