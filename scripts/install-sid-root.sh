#!/bin/sh
# Prepares, once per machine, a minimal Debian sid root holding the current
# editors the tests drive for real: Helix (hx), Neovim and Emacs (with the Go
# tree-sitter grammar for go-ts-mode), tmux to type into Helix, git. It lives
# outside the repository, in $DARMAN_TEST_CACHE/sid (default
# ~/.cache/darman-test/sid), and the tests (editors/, the sidroot helper)
# copy darman into it and run the editors there with chroot.
#
# Idempotent: a root that is complete (its .complete stamp matches the
# package list below) is left as is. The versions it got are recorded in
# ROOT/.versions. Nothing stays mounted: proc, /dev and /dev/pts are mounted
# in a private mount namespace (unshare) that ends with the command, even
# when it fails, so the host never keeps a mount.
#
# When it cannot prepare the root (not root, no debootstrap and no apt-get,
# no network to Debian's packages) it says so and which tests will be
# skipped, and exits 0: the rest of `make test` goes on.
set -eu

CACHE=${DARMAN_TEST_CACHE:-$HOME/.cache/darman-test}
ROOT=$CACHE/sid
PACKAGES="hx neovim emacs-nox tmux git ca-certificates"
# Emacs 30's go-ts-mode needs the Go tree-sitter grammar, which Debian ships
# as source (tree-sitter-go-src, whose build dependencies would pull a
# compiler into the root): it is compiled here with the host's C compiler.
GRAMMAR=tree-sitter-go-src
STAMP="packages: $PACKAGES; grammar: $GRAMMAR"
SKIPPED="the tests with Helix 25.07, Neovim 0.12 and Emacs 30 (editors: TestHelix*, TestNeovim012*, TestEmacs30*) will be skipped"

if [ -f "$ROOT/.complete" ] && [ "$(cat "$ROOT/.complete")" = "$STAMP" ]; then
  exit 0
fi

cannot() {
  echo "install-sid-root: $1; $SKIPPED" >&2
  exit 0
}

[ "$(id -u)" = 0 ] || cannot "preparing the Debian sid root needs root (debootstrap, chroot)"
command -v unshare >/dev/null 2>&1 || cannot "unshare (util-linux) is missing"
if ! command -v debootstrap >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || cannot "debootstrap is missing and there is no apt-get to install it"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1; } ||
    cannot "apt-get could not install debootstrap"
fi

# The Debian mirror apt already uses here (deb822 URIs: or a one-line deb).
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb  *\(\[[^]]*\] *\)\{0,1\}\(http[^ ]*\/debian\)\/* .*/\2/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

echo "install-sid-root: a Debian sid root with $PACKAGES into $ROOT from $mirror (about 5 minutes the first time)"
start=$(date +%s)
mkdir -p "$CACHE"
# Each stage leaves a stamp, so a run that stopped half way resumes.
work=$ROOT.partial
log=$CACHE/sid-root.log
if [ ! -f "$work/.debootstrapped" ]; then
  rm -rf "$work"
  if ! debootstrap --variant=minbase sid "$work" "$mirror" >"$log" 2>&1; then
    tail -n 5 "$log" >&2
    rm -rf "$work"
    cannot "debootstrap could not fetch sid from $mirror (no network to Debian's packages?), its log is $log"
  fi
  touch "$work/.debootstrapped"
fi

# Inside the root: the mounts apt and dpkg need, private to this command.
# The mirror's sid Release file may be past its Valid-Until date.
if ! unshare --mount --propagation private sh -c '
  set -e
  R=$1; shift
  mount -t proc proc "$R/proc"
  mount --bind /dev "$R/dev"
  mount --bind /dev/pts "$R/dev/pts"
  chroot "$R" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 sh -c "
    apt-get -o Acquire::Check-Valid-Until=false update -qq &&
    apt-get -o Acquire::Check-Valid-Until=false install -y -qq --no-install-recommends $* &&
    apt-get clean"
' sh "$work" $PACKAGES >>"$log" 2>&1; then
  tail -n 5 "$log" >&2
  cannot "apt-get inside the sid root could not install $PACKAGES, its log is $log"
fi

cc=$(command -v cc || command -v gcc || true)
[ -n "$cc" ] || cannot "a C compiler (cc) is needed to build the Go tree-sitter grammar for Emacs 30's go-ts-mode"
if ! unshare --mount --propagation private sh -c '
  set -e
  R=$1
  mount -t proc proc "$R/proc"
  mount --bind /dev "$R/dev"
  rm -rf "$R/tmp/grammar" && mkdir -p "$R/tmp/grammar"
  chroot "$R" sh -c "cd /tmp/grammar && apt-get -o Acquire::Check-Valid-Until=false download -qq $2"
' sh "$work" $GRAMMAR >>"$log" 2>&1; then
  tail -n 5 "$log" >&2
  cannot "apt-get inside the sid root could not download $GRAMMAR, its log is $log"
fi
dpkg-deb -x "$work"/tmp/grammar/"$GRAMMAR"_*.deb "$work/tmp/grammar/x"
src=$(dirname "$(find "$work/tmp/grammar/x" -path '*/parser/src/parser.c' | head -n 1)")
extra=""
[ -f "$src/scanner.c" ] && extra="$src/scanner.c"
"$cc" -shared -fPIC -O1 -I"$src" "$src/parser.c" $extra -o "$work/usr/local/lib/libtree-sitter-go.so" >>"$log" 2>&1 ||
  cannot "$cc could not build the Go tree-sitter grammar, its log is $log"
chroot "$work" ldconfig
grammar_version=$(dpkg-deb -f "$work"/tmp/grammar/"$GRAMMAR"_*.deb Version)
rm -rf "$work/tmp/grammar" "$work"/var/lib/apt/lists/*

chroot "$work" dpkg-query -W -f '${Package} ${Version}\n' $PACKAGES >"$work/.versions"
echo "$GRAMMAR $grammar_version (built as /usr/local/lib/libtree-sitter-go.so)" >>"$work/.versions"
rm -rf "$ROOT"
mv "$work" "$ROOT"
echo "$STAMP" >"$ROOT/.complete"
echo "install-sid-root: done in $(( $(date +%s) - start )) s, $(du -sh "$ROOT" | cut -f1); versions:"
sed 's/^/  /' "$ROOT/.versions"
