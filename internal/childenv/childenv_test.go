package childenv_test

import (
	"slices"
	"testing"

	"github.com/darman-dev/darman/internal/childenv"
)

var environ = []string{
	"PATH=/usr/bin", "HOME=/home/u", "GITHUB_TOKEN=ghp_abc", "AWS_SECRET_ACCESS_KEY=xyz",
	"DB_PASSWORD=hunter2", "MY_CREDENTIALS_FILE=/x", "api_key=lower", "EDITOR=vi",
	"PROVIDER=sk-ant-the-key-itself", "GOFLAGS=-mod=mod", "LC_ALL=C", "NOEQUALS",
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name   string
		policy childenv.Policy
		want   []string
	}{
		{"secrets by name and value", childenv.Policy{Secrets: []string{"sk-ant-the-key-itself", "short"}},
			[]string{"EDITOR=vi", "GOFLAGS=-mod=mod", "HOME=/home/u", "LC_ALL=C", "PATH=/usr/bin"}},
		{"keep", childenv.Policy{Keep: []string{"github_*"}},
			[]string{"EDITOR=vi", "GITHUB_TOKEN=ghp_abc", "GOFLAGS=-mod=mod", "HOME=/home/u", "LC_ALL=C", "PATH=/usr/bin", "PROVIDER=sk-ant-the-key-itself"}},
		{"exclude and set", childenv.Policy{Exclude: []string{"GO*"}, Set: map[string]string{"EDITOR": "true", "NEW": "1"}},
			[]string{"EDITOR=true", "HOME=/home/u", "LC_ALL=C", "NEW=1", "PATH=/usr/bin", "PROVIDER=sk-ant-the-key-itself"}},
		{"core", childenv.Policy{Inherit: childenv.InheritCore},
			[]string{"HOME=/home/u", "LC_ALL=C", "PATH=/usr/bin"}},
		{"none", childenv.Policy{Inherit: childenv.InheritNone, Set: map[string]string{"PATH": "/bin"}},
			[]string{"PATH=/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := childenv.Filter(environ, tt.policy); !slices.Equal(got, tt.want) {
				t.Errorf("Filter =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestDroppedNamesNoValues(t *testing.T) {
	got := childenv.Dropped(environ, childenv.Policy{Secrets: []string{"sk-ant-the-key-itself"}})
	var names []string
	for _, d := range got {
		names = append(names, d.Name+":"+d.Why)
	}
	want := []string{"AWS_SECRET_ACCESS_KEY:secret name", "DB_PASSWORD:secret name", "GITHUB_TOKEN:secret name",
		"MY_CREDENTIALS_FILE:secret name", "PROVIDER:secret value", "api_key:secret name"}
	if !slices.Equal(names, want) {
		t.Errorf("Dropped = %q, want %q", names, want)
	}
}
