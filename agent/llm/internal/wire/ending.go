package wire

import "github.com/darman-dev/darman/agent/llm"

// Ending closes a stream the same way for every API: the transport's error
// if there was one, a cut stream if the API's final event (complete) never
// came, and otherwise the usage and finish events every stream ends with.
func Ending(buf []llm.Event, err error, complete bool, missing string, u llm.Usage, m llm.ModelInfo, f llm.FinishReason) ([]llm.Event, error) {
	if err == nil && !complete {
		err = &llm.Error{Kind: llm.ErrStreamCut, Message: missing}
	}
	if err != nil {
		return buf, err
	}
	return append(buf, llm.Event{Kind: llm.EventUsage, Usage: u, Cost: m.Cost.Of(u)}, llm.Event{Kind: llm.EventFinish, Finish: f}), nil
}
