package export

import (
	"encoding/json"
	"io"
	"strings"
)

// DashboardQueries returns every PromQL expression of a Grafana dashboard
// (panel targets and query variables), with the template variables replaced
// so each can be run as is. The tests use it to prove that the shipped
// dashboard (deploy/grafana) only asks for what the exporter exposes.
func DashboardQueries(r io.Reader) ([]string, error) {
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Type, Query string }
		}
	}
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, err
	}
	vars := strings.NewReplacer(`"$robot"`, `".*"`, `"$instance"`, `".*"`, `"$topic"`, `".*"`)
	var out []string
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, vars.Replace(t.Expr))
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			out = append(out, vars.Replace(v.Query))
		}
	}
	return out, nil
}
