//go:build !linux

package main

// dropStartupPages does nothing outside Linux (see the Linux version).
func dropStartupPages() error { return nil }
