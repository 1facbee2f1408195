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
;; kept in `darman-last-state' and a log buffer.
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

(cl-defmethod eglot-handle-notification
  (_server (_method (eql darman/sessionUpdate)) &key update &allow-other-keys)
  "Keep the session's state, and its answer in the *darman* buffer."
  (let ((kind (plist-get update :sessionUpdate)))
    (cond
     ((equal kind "state_update") (setq darman-last-state (plist-get update :state)))
     ((equal kind "agent_message_chunk")
      (with-current-buffer (get-buffer-create "*darman*")
        (goto-char (point-max))
        (insert (plist-get (plist-get update :content) :text)))))))

(provide 'darman)
;;; darman.el ends here
