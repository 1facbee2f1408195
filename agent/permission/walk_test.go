package permission

import (
	"reflect"
	"testing"
)

// walkLines are shapes walk follows itself or hands on, mixed: every
// command in them must be found in the same order as syntax.Walk finds it.
var walkLines = []string{
	pipeline20,
	"a | b && c || d; e & f",
	"# comment\nls # trailing\n# last",
	"x=$(rm a) y=`rm b` ls $(rm c) \"$(rm d)\" > $(rm e) 2>>\"$(rm f)\" < <(rm g)",
	"cat <<EOF | grep x\n$(rm a) ${b[$(rm c)]}\nEOF",
	"cat <<'EOF' >out\n$(not run)\nEOF",
	"{ a; b; } > f 2>&1; (c; d) | e",
	"! a | b; time c | d; coproc e",
	"if a > f; then b | c; fi; while d; do e; done < g",
	"a[$(rm x)]=1; declare -a b=($(rm y)); export PATH=/x; Z=$(rm q) cmd",
	"echo ${x:$(rm a)} $((b)) ${!c} ${d@P} ${e:=f} ${PATH:=/x}",
	"[[ -v a && $x -eq 1 ]] && (( y++ )) && let z=w",
	"eval 'a | b' \"c\"; sh -c 'd && e'; bash -c \"$x\"",
	"cd sub && cat ../x > y; pushd /tmp; popd",
	"f() { rm x; } > out; function g { ls; }",
	"echo {a,b}/$(rm c) ~/x ~root/y *.go '*'",
	"case $(rm a) in $(rm b)) c;; *) d;; esac",
	"for i in $(rm a); do b; done; for ((i=$(rm c); i<1; i++)); do :; done",
	"exec 3>&1 4<>f 5>&-; cmd 2>&1 >| g &> h &>> i",
	"x=1; y+=2; arr=(a b $(rm c))",
	"echo $'a\\nb' $\"c\" \"a${b}c$(d)e`f`\"",
	"@(a|b) !(c) +(d)",
}

// TestWalkAgrees holds splitter.walk to syntax.Walk: the commands found,
// their order and everything in them are the same either way.
func TestWalkAgrees(t *testing.T) {
	for _, line := range append(append([]string(nil), bashSeeds...), walkLines...) {
		walkAgrees(t, line)
	}
}

// FuzzBashWalk is TestWalkAgrees on any line.
func FuzzBashWalk(f *testing.F) {
	for _, s := range append(append([]string(nil), bashSeeds...), walkLines...) {
		f.Add(s)
	}
	f.Fuzz(walkAgrees)
}

func walkAgrees(t *testing.T, line string) {
	got, gotErr := splitBash(line, false)
	want, wantErr := splitBash(line, true)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: walk says %v, syntax.Walk %v", line, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q: walk found\n%#v\nsyntax.Walk found\n%#v", line, got, want)
	}
}
