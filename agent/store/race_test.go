//go:build race

package store_test

// raceEnabled: the race detector makes every writer process several times
// slower, so the kill test kills fewer of them (make test runs with -race;
// go test ./agent/store without it kills all 200).
const raceEnabled = true
