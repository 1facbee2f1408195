package main

import (
	"log/slog"
	"sync"
)

// defaultModelTakesImages says, for darman acp's initialize, whether the
// model the configuration found from darman's directory gives new
// sessions takes images: the catalog's word, changed by the
// configuration's "images". No configuration, or no model, says no.
func (a *app) defaultModelTakesImages(log *slog.Logger) func() bool {
	return sync.OnceValue(func() bool {
		loaded, err := a.config()
		if err != nil || loaded.Config.Model == "" {
			return false
		}
		p, id, err := newModels(loaded.Config, log).resolve(loaded.Config.Model)
		if err != nil {
			return false
		}
		return p.Model(id).Images
	})
}
