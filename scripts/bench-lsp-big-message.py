#!/usr/bin/env python3
# Sends a real `darman lsp` one didOpen of SIZE bytes (streamed, never held
# here), then a request, and prints RSS before and after (VmRSS, VmHWM in
# MiB) and how long the answer took. Usage:
#   scripts/bench-lsp-big-message.py path/to/darman SIZE
# e.g. 250000000 (over the 64 MiB limit: refused) or 60000000 (accepted).
import subprocess, sys, os, json, time, threading, tempfile
binary = sys.argv[1]
size = int(sys.argv[2])
root = tempfile.mkdtemp()
home = tempfile.mkdtemp()
env = dict(os.environ, HOME=home, XDG_DATA_HOME=home+"/data", XDG_CONFIG_HOME=home+"/config", XDG_STATE_HOME=home+"/state", XDG_CACHE_HOME=home+"/cache")
p = subprocess.Popen([binary, "lsp", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root, env=env)
def send(obj):
    b = json.dumps(obj).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def read():
    n = None
    while True:
        line = p.stdout.readline()
        if line in (b"\r\n", b"\n"): break
        if line.lower().startswith(b"content-length"): n = int(line.split(b":")[1])
    return json.loads(p.stdout.read(n))
def wait_id(i):
    while True:
        m = read()
        if m.get("id") == i and "method" not in m: return m
def status():
    d = {}
    for l in open("/proc/%d/status" % p.pid):
        k, v = l.split(":", 1)
        if k in ("VmRSS", "VmHWM"): d[k] = int(v.split()[0]) // 1024
    return d
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":None,"rootUri":"file://"+root,"capabilities":{}}})
wait_id(1)
send({"jsonrpc":"2.0","method":"initialized","params":{}})
send({"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"darman.session.list"}})
wait_id(2)
time.sleep(1)
before = status()
# didOpen notification with a huge text, streamed
headb = json.dumps({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file://"+root+"/big.txt","languageId":"plaintext","version":1,"text":"X"}}}).encode()
pre, post = headb.split(b'"X"')
pre += b'"'; post = b'"' + post
body = size
p.stdin.write(b"Content-Length: %d\r\n\r\n" % body + pre)
left = body - len(pre) - len(post)
chunk = b"a" * (1 << 20)
t0 = time.time()
while left > 0:
    n = min(left, len(chunk)); p.stdin.write(chunk[:n]); left -= n
p.stdin.write(post); p.stdin.flush()
t1 = time.time()
send({"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"darman.session.list"}})
answers = []
while True:
    m = read()
    answers.append(m)
    if m.get("id") == 3 and "method" not in m: break
t2 = time.time()
after = status()
print(json.dumps({"binary": binary, "body_bytes": size, "before_MiB": before, "after_MiB": after, "write_s": round(t1-t0,2), "answer_after_write_s": round(t2-t1,2), "messages_before_answer": [ (m.get("id"), m.get("method"), (m.get("error") or {}).get("message")) for m in answers[:-1]][:5]}))
send({"jsonrpc":"2.0","id":4,"method":"shutdown"}); wait_id(4)
send({"jsonrpc":"2.0","method":"exit"})
p.wait(timeout=20)
