package permission

import "strings"

// arity says how many leading words name what a command does, so that an
// "always" answer grants that and not the whole line: "git status -s" →
// "git status *", "npm run test -- -u" → "npm run test *". Keys are one or two
// words; the longer key wins. Commands not listed have arity 1 ("ls -la" →
// "ls *").
//
// 0 means the exact command only: a grant for "sudo x" must not cover
// "sudo y". rm has 2 so that "rm build.log" grants "rm build.log *", never
// "rm *". Interpreters have 2 so that a grant names the script they run.
var arity = map[string]int{
	"sudo": 0, "su": 0, "doas": 0,
	"rm": 2,

	"git": 2, "go": 2, "cargo": 2, "make": 2, "just": 2, "task": 2,
	"npm": 2, "pnpm": 2, "yarn": 2, "bun": 2, "deno": 2, "npx": 2,
	"docker": 2, "podman": 2, "kubectl": 2, "helm": 2, "terraform": 2, "tofu": 2,
	"pip": 2, "pip3": 2, "uv": 2, "poetry": 2, "pipenv": 2,
	"brew": 2, "apt": 2, "apt-get": 2, "dnf": 2, "systemctl": 2,
	"gh": 2, "mvn": 2, "gradle": 2, "./gradlew": 2, "dotnet": 2, "rustup": 2,
	"nix": 2, "bazel": 2, "swift": 2, "zig": 2, "mix": 2, "bundle": 2, "rake": 2, "composer": 2,
	"python": 2, "python3": 2, "node": 2, "ruby": 2, "perl": 2, "php": 2,
	"bash": 2, "sh": 2, "zsh": 2,

	"npm run": 3, "pnpm run": 3, "yarn run": 3, "bun run": 3, "npm exec": 3,
	"docker compose": 3, "docker container": 3, "docker image": 3,
	"docker network": 3, "docker volume": 3, "podman compose": 3,
	"gh pr": 3, "gh issue": 3, "gh repo": 3, "gh run": 3, "gh workflow": 3, "gh release": 3,
	"git stash": 3, "git remote": 3, "git worktree": 3, "git submodule": 3,
	"go mod": 3, "go tool": 3, "go work": 3,
	"kubectl config": 3, "uv pip": 3, "uv run": 3, "poetry run": 3, "pipenv run": 3,
	"aws": 3, "gcloud": 3,
}

// arityPairs are the first words of arity's two-word keys.
var arityPairs = func() map[string]bool {
	m := map[string]bool{}
	for k := range arity {
		if first, _, ok := strings.Cut(k, " "); ok {
			m[first] = true
		}
	}
	return m
}()

// Suggest returns the pattern an "always" answer to this command grants: its
// first words by arity followed by " *". When those words run out, or one
// of them is an option, it is the exact command instead, which never grants
// more than was shown. A command no rule may allow has no suggestion ("").
func (c Command) Suggest() string {
	if c.Reason != "" || len(c.Args) == 0 {
		return ""
	}
	n := 1
	if k, ok := arity[c.Args[0]]; ok {
		n = k
	}
	if len(c.Args) > 1 && arityPairs[c.Args[0]] {
		if k, ok := arity[c.Args[0]+" "+c.Args[1]]; ok {
			n = k
		}
	}
	if n == 0 || len(c.Args) < n {
		return escapePattern(c.Subject)
	}
	for _, a := range c.Args[1:n] {
		if strings.HasPrefix(a, "-") {
			return escapePattern(c.Subject)
		}
	}
	return escapePattern(strings.Join(c.Args[:n], " ")) + " *"
}
