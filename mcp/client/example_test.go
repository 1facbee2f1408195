package client_test

import (
	"fmt"

	"github.com/darman-dev/darman/mcp/client"
)

func ExampleModelName() {
	fmt.Println(client.ModelName("github", "create_issue"))
	fmt.Println(client.ModelName("my server", "files/read"))
	// Output:
	// github_create_issue
	// my_server_files_read
}

func ExampleDrift() {
	before := []client.BindingIdentity{{Name: "github", Digest: "a", CatalogDigest: "c1",
		Tools: []client.ToolIdentity{{RawName: "create_issue", ModelName: "github_create_issue", InputSchema: "s1"}}}}
	after := []client.BindingIdentity{{Name: "github", Digest: "b", CatalogDigest: "c2",
		Tools: []client.ToolIdentity{{RawName: "create_issue", ModelName: "github_create_issue", InputSchema: "s2"}}}}
	for _, line := range client.Drift(before, after) {
		fmt.Println(line)
	}
	// Output:
	// server github: tool create_issue's input schema changed
}
