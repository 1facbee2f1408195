package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// A call of the edit tool on a Disk workspace, with a permission checker
// that allows everything.
func Example() {
	root, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "hello.go"), []byte("package main\n\n// main greets.\nfunc main() {\n\tprintln(\"hello\")\n}\n"), 0o644)

	tools := map[string]tool.Tool{}
	for _, tl := range tool.Builtins(tool.Options{}) {
		tools[tl.Info().Name] = tl
	}
	env := &tool.Env{
		Workspace: tool.NewDisk(root),
		Permit:    func(context.Context, permission.Call) error { return nil },
		Files:     &tool.FileTimes{},
	}
	input, _ := json.Marshal(map[string]string{
		"path":      "hello.go",
		"oldString": `println("hello")`,
		"newString": `println("hello, world")`,
	})
	res, err := tools["edit"].Run(context.Background(), env, input)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Output)
	// Output:
	// Edited hello.go. These lines now read:
	//      3	// main greets.
	//      4	func main() {
	//      5		println("hello, world")
	//      6	}
}

// A refused permission becomes the call's result, for the model to read.
func ExampleDenied() {
	err := &permission.DeniedError{Permission: "bash", Subjects: []string{"rm -rf build"}, Message: "use make clean"}
	res, ok := tool.Denied(fmt.Errorf("check: %w", err))
	fmt.Println(ok, res.IsError)
	fmt.Println(res.Output)
	// Output:
	// true true
	// the user rejected bash "rm -rf build": use make clean
}
