//go:build windows

package main

import "errors"

// mkfifo fails: Windows has no FIFOs (the tests that need one skip).
func mkfifo(string) error { return errors.New("Windows has no FIFOs") }
