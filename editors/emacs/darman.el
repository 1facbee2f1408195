;;; darman.el --- Opt eglot into darman's custom messages  -*- lexical-binding: t -*-

;; Copyright 2026 The darman authors
;; SPDX-License-Identifier: Apache-2.0

;; Author: The darman authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; URL: https://github.com/darman-dev/darman
;; Keywords: tools, languages, convenience

;; This file is not part of GNU Emacs.

;;; Commentary:

;; An optional helper for Emacs 28+ with eglot 1.9+ and darman, the AI
;; coding agent that speaks LSP (docs/protocol.md).  With it, darman sends
;; its edits as workspace/applyEdit, eglot applies them to the buffers (so
;; they can be undone) and this file saves them before darman is answered,
;; so darman never writes a file Emacs visits; the session's updates are
;; kept in `darman-last-state' and its answers in the *darman* buffer, where
;; M-x darman-apply-block applies the code block at point to the file its
;; fence names (darman.turn.apply: asked as darman's edits are, and taken
;; back by reverting the turn).
;;
;; Without it darman still works with plain eglot: edits go to the disk
;; (turn on `global-auto-revert-mode' to see them), permissions are asked
;; with `completing-read', and the transcript's path is in the events
;; buffer.
;;
;; Install (Emacs 29+; darman itself is a binary on PATH):
;;   (package-vc-install
;;    '(darman :url "https://github.com/darman-dev/darman"
;;             :lisp-dir "editors/emacs"))
;; or put this directory on `load-path' and (require 'darman) after eglot.
;; Then:
;;   (add-to-list 'eglot-server-programs '((go-mode go-ts-mode) . ("darman" "lsp")))
;;
;; AI completions: eglot has no inline (ghost text) completions, so turn
;; on darman's completion items in darman.json,
;;   "completion": {"model": "ollama/qwen2.5-coder:1.5b", "items": true}
;; and its suggestion comes through `completion-at-point' (and Company or
;; Corfu on top of it) as an item marked "darman".

;;; Code:

(require 'eglot)
(require 'cl-lib)

(defvar darman-last-state nil
  "The state of darman's last session update: running, idle, failed, ...")

(defvar darman-opt-ins '(:sessionUpdates t :applyEditAndSave t)
  "What darman is told this Emacs handles.")

(cl-defmethod eglot-client-capabilities :around (_server)
  (let ((caps (cl-call-next-method)))
    (plist-put caps :experimental (list :darman darman-opt-ins))))

(defun darman--edit-paths (edit)
  "The files the workspace EDIT touches."
  (let (paths)
    (cl-loop for (uri _edits) on (plist-get edit :changes) by #'cddr
             do (push (eglot--uri-to-path (substring (symbol-name uri) 1)) paths))
    (mapc (lambda (change)
            (let ((doc (plist-get change :textDocument)))
              (when doc (push (eglot--uri-to-path (plist-get doc :uri)) paths))))
          (plist-get edit :documentChanges))
    paths))

(cl-defmethod eglot-handle-request :around
  (_server (_method (eql workspace/applyEdit)) &key edit &allow-other-keys)
  "Apply darman's edit, then save the buffers it touched, then answer."
  (let ((eglot-confirm-server-initiated-edits nil)
        (result (cl-call-next-method)))
    (dolist (path (darman--edit-paths edit))
      (let ((buf (find-buffer-visiting path)))
        (when buf
          (with-current-buffer buf (save-buffer)))))
    result))

(defvar darman--last-turn nil
  "The turn whose answer the *darman* buffer ends with.")

(cl-defmethod eglot-handle-notification
  (server (_method (eql darman/sessionUpdate)) &key sessionId turnId update &allow-other-keys)
  "Keep the session's state, and its answer in the *darman* buffer.
Each answer starts on a line of its own; its text keeps the session
and the server it came from (the properties `darman-session' and
`darman-server'), for `darman-apply-block'."
  (let ((kind (plist-get update :sessionUpdate)))
    (cond
     ((equal kind "state_update") (setq darman-last-state (plist-get update :state)))
     ((equal kind "agent_message_chunk")
      (with-current-buffer (get-buffer-create "*darman*")
        (goto-char (point-max))
        (unless (or (bobp) (equal turnId darman--last-turn))
          (insert "\n\n"))
        (setq darman--last-turn turnId)
        (insert (propertize (plist-get (plist-get update :content) :text)
                            'darman-session sessionId 'darman-server server)))))))

;;; Applying a code block of an answer (`darman-apply-block'): the block
;;; at point in *darman* becomes the whole text of the file its fence
;;; names, through darman's own edit path (darman.turn.apply,
;;; docs/protocol.md): asked as the agent's edits are, written through
;;; the buffers, and part of the session's last turn, whose revert takes
;;; it back.

(defun darman--fence-open (line)
  "The fence LINE opens, as (FENCE INDENT INFO), or nil.
CommonMark's ``` or ~~~, three or more, indented at most 3 spaces; a
backtick fence's info string holds no backtick."
  (when (string-match "\\`\\( \\{0,3\\}\\)\\(`\\{3,\\}\\|~\\{3,\\}\\)\\(.*\\)\\'" line)
    (let ((fence (match-string 2 line))
          (indent (length (match-string 1 line)))
          (info (match-string 3 line)))
      (unless (and (eq (aref fence 0) ?`) (string-match-p "`" info))
        (list fence indent info)))))

(defun darman--fence-closes-p (line fence)
  "Whether LINE closes the code block FENCE opened."
  (and (string-match "\\`\\( \\{0,3\\}\\)\\(`+\\|~+\\)[ \t]*\\'" line)
       (eq (aref (match-string 2 line) 0) (aref fence 0))
       (>= (length (match-string 2 line)) (length fence))))

(defun darman--fence-file (info)
  "The file a fence's INFO string names, or nil.
The forms the VS Code panel reads (vscode-extension/webview/src/markdown.ts
fenceFile): \"go:main.go\", \"go title=main.go\" (or file=, filename=,
path=, the name quoted or not), or a later word with a \".\" or \"/\"
in it (\"go main.go\")."
  (let ((words (split-string info "[ \t\n\r\f\v]+" t)))
    (if (and words (string-match "\\`[A-Za-z0-9_+#.-]+:\\([^ \t]+\\)\\'" (car words)))
        (match-string 1 (car words))
      (cl-loop for w in (cdr words)
               thereis (cond
                        ((string-match "\\`\\(?:title\\|file\\|filename\\|path\\)=[\"']?\\([^\"' \t]+\\)[\"']?\\'" w)
                         (match-string 1 w))
                        ((and (string-match-p "\\`[^= \t\"'`]+[./][^= \t\"'`]*\\'" w)
                              (not (string-prefix-p "-" w)))
                         w))))))

(defun darman--block-at (pos)
  "The fenced code block of the current buffer holding POS, or nil.
A plist (:code :file :start), :start the opening fence's position."
  (save-excursion
    (let ((at (progn (goto-char pos) (line-beginning-position)))
          open start found)
      (goto-char (point-min))
      (while (and (not found) (not (eobp)))
        (let ((line (buffer-substring-no-properties (line-beginning-position) (line-end-position)))
              (here (line-beginning-position)))
          (cond
           ((and open (darman--fence-closes-p line (car open)))
            (when (<= start at here)
              (let ((lines (split-string (buffer-substring-no-properties
                                          (save-excursion (goto-char start) (line-beginning-position 2))
                                          here)
                                         "\n")))
                ;; The opening fence's indent comes off each line (CommonMark).
                (setq found (list :code (concat
                                         (mapconcat (lambda (l)
                                                      (string-match "\\` *" l)
                                                      (substring l (min (nth 1 open) (match-end 0))))
                                                    (butlast lines) "\n")
                                         "\n")
                                  :file (darman--fence-file (nth 2 open))
                                  :start start))))
            (setq open nil))
           ((not open)
            (setq open (darman--fence-open line) start here)
            ;; Past POS outside any block: none holds it.
            (when (and (> here at) (not open))
              (goto-char (point-max)))))
          (forward-line 1)))
      found)))

(defun darman--last-file ()
  "The file of the most recent buffer visiting one, or nil."
  (cl-loop for b in (buffer-list) thereis (buffer-file-name b)))

(defun darman--uri (path)
  "PATH as a file URI, with the eglot at hand."
  (if (fboundp 'eglot-path-to-uri)
      (eglot-path-to-uri path)
    (with-no-warnings (eglot--path-to-uri path))))

(defun darman-apply-block (&optional file)
  "Apply the code block at point in darman's answers to FILE.
Point is in a fenced block of the *darman* buffer; its code becomes
the whole text of FILE, else of the file its fence names (```go
main.go, ```go:main.go, ```go title=\"main.go\"), else of a file read
from the minibuffer (with a prefix argument it is always read).  It
goes through darman.turn.apply for the session of that answer: the
edit permission is asked by the user's rules, the file is written
through its buffer and saved, and the edit joins the session's last
turn, whose revert takes it back.  The outcome is shown in the echo
area."
  (interactive
   (list (when current-prefix-arg
           (read-file-name "Apply the code block to file: " nil (darman--last-file)))))
  (let* ((block (or (darman--block-at (point))
                    (user-error "darman: no code block at point: put point inside a fenced block (```) of darman's answer in *darman*")))
         (start (plist-get block :start))
         (session (or (get-text-property start 'darman-session)
                      (user-error "darman: the answer at point belongs to no session darman sent")))
         (server (get-text-property start 'darman-server))
         (_ (unless (and server (jsonrpc-running-p server))
              (user-error "darman: the darman that sent this answer is no longer running")))
         (file (or file (plist-get block :file)
                   (let ((f (read-file-name "Apply the code block to file: " nil (darman--last-file))))
                     (if (string-empty-p f)
                         (user-error "darman: not applied: the code block names no file and none was given")
                       f))))
         (path (expand-file-name file (project-root (eglot--project server)))))
    (jsonrpc-async-request
     server :workspace/executeCommand
     (list :command "darman.turn.apply"
           :arguments (vector (list :sessionId session :uri (darman--uri path) :text (plist-get block :code))))
     ;; The user may take their time over the permission question.
     :timeout nil
     :success-fn (lambda (result)
                   (cond
                    ((eq (plist-get result :denied) t)
                     (message "darman: not applied to %s: you rejected the edit" file))
                    ((eq (plist-get result :unchanged) t)
                     (message "darman: %s already holds the code block" file))
                    (t (message "darman: applied to %s (reverting the turn takes it back)" file))))
     :error-fn (lambda (err)
                 (message "darman: not applied to %s: %s" file (plist-get err :message))))))

(provide 'darman)
;;; darman.el ends here
