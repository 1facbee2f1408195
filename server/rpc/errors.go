package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"
)

// Error codes of JSON-RPC and LSP beyond those jsonrpc2 names.
const (
	CodeServerNotInitialized = -32002
	CodeUnknownError         = -32001
	CodeRequestFailed        = -32803
	CodeServerCancelled      = -32802
	CodeContentModified      = -32801
	CodeRequestCancelled     = -32800
)

// Errorf returns an error that answers a request with code and the
// formatted message.
func Errorf(code int64, format string, args ...any) error {
	return &jsonrpc2.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams returns the InvalidParams (-32602) error for a request whose
// parameters are wrong; the message should say which field and what was
// expected.
func InvalidParams(format string, args ...any) error {
	return Errorf(jsonrpc2.CodeInvalidParams, format, args...)
}

// IsMethodNotFound reports whether err is the client's MethodNotFound reply:
// the client does not implement what was asked.
func IsMethodNotFound(err error) bool {
	var e *jsonrpc2.Error
	return errors.As(err, &e) && e.Code == jsonrpc2.CodeMethodNotFound
}

// Decode reads a request's params into v. Fields v does not have are
// ignored, as LSP clients add their own; absent or null params leave v as
// it is. A mismatch is an InvalidParams error naming what did not fit.
func Decode(params json.RawMessage, v any) error {
	return decode(params, v, false)
}

// DecodeStrict is Decode that also refuses fields v does not have, for
// darman's own messages, whose every field is known.
func DecodeStrict(params json.RawMessage, v any) error {
	return decode(params, v, true)
}

func decode(params json.RawMessage, v any, strict bool) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	var err error
	if strict {
		dec := json.NewDecoder(bytes.NewReader(params))
		dec.DisallowUnknownFields()
		err = dec.Decode(v)
	} else {
		// Unmarshal decodes in place; a Decoder would first copy the
		// params (a whole document, for didOpen) into its buffer.
		err = json.Unmarshal(params, v)
	}
	if err != nil {
		return InvalidParams("invalid params: %s", describeJSONError(err))
	}
	return nil
}

// describeJSONError turns encoding/json's message into one that names the
// field in JSON terms.
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Sprintf("got a JSON %s, expected %s", te.Value, jsonKind(te.Type.Kind().String()))
		}
		return fmt.Sprintf("field %q: got a JSON %s, expected %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not valid JSON at byte %d: %v", se.Offset, err)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number of type " + goKind
	}
	return "a " + goKind
}

// Error is a JSON-RPC error: a handler returns one to choose its answer's
// code; Conn.Call returns one for the client's error answer.
type Error = jsonrpc2.Error
