package api

import (
	"context"
	"path/filepath"
)

// templatesRoutes are the routes of app templates, template sources, config sets and labels (issue 15).
//
// Permissions: the catalogue is read with stacks:view in some environment
// and deployed with stacks:create in the target environment (checked by the
// handler, which reads the environment from the body); a template's compose
// file (which may fetch a repository) needs stacks:create in some
// environment; template sources are
// console settings (settings:view / settings:edit). Config sets are read by
// the container create form (containers:create in some environment) and
// changed with settings:edit. Labels are read with environments:view and
// changed (on every environment: added, renamed, deleted, coloured,
// defined) with environments:edit on all environments (an Admin).
func (s *Server) templatesRoutes() []route {
	s.tpl.setup(s)
	if dir := s.templateFilesDir(); dir != "" {
		s.tpl.catalog.UseFileDir(dir)
	}
	if s.dataDir != "" {
		s.tpl.catalog.UseLogoDir(filepath.Join(s.dataDir, "template-logos"))
		// Logos of sources deleted while Berth was not running go.
		if err := s.tpl.catalog.PruneLogos(context.Background()); err != nil {
			s.log.Warn("template logos: prune", "err", err)
		}
	}
	return []route{
		{"GET", "/api/templates", "stacks:view", AnyEnv, "", false, s.listTemplates},
		{"POST", "/api/templates/compose", "stacks:create", AnyEnv, Quiet, false, s.templateCompose},
		{"POST", "/api/templates/deploy", "stacks:create", AnyEnv, "template.deploy", false, s.deployTemplate},
		{"GET", "/api/templates/{id}/logo", "stacks:view", AnyEnv, "", false, s.templateLogo},
		{"GET", "/api/templates/sources", "settings:view", NoEnv, "", false, s.listTemplateSources},
		{"POST", "/api/templates/sources", "settings:edit", NoEnv, "template_source.create", false, s.createTemplateSource},
		{"PUT", "/api/templates/sources", "settings:edit", NoEnv, "template_source.update", false, s.updateTemplateSource},
		{"DELETE", "/api/templates/sources", "settings:edit", NoEnv, "template_source.delete", false, s.deleteTemplateSource},

		{"GET", "/api/config-sets", "containers:create", AnyEnv, "", false, s.listConfigSets},
		{"POST", "/api/config-sets", "settings:edit", NoEnv, "config_set.create", false, s.saveConfigSet},
		{"GET", "/api/config-sets/{id}", "containers:create", AnyEnv, "", false, s.getConfigSet},
		{"PUT", "/api/config-sets/{id}", "settings:edit", NoEnv, "config_set.update", false, s.saveConfigSet},
		{"DELETE", "/api/config-sets/{id}", "settings:edit", NoEnv, "config_set.delete", false, s.deleteConfigSet},

		{"GET", "/api/labels", "environments:view", AnyEnv, "", false, s.listLabels},
		{"POST", "/api/labels", "environments:edit", NoEnv, "label.change", false, s.manageLabels},
	}
}

// templateFilesDir is DATA_DIR/templates, the directory file template
// sources must be in ("" for a Server without a DATA_DIR, whose route table
// only describes the API: file sources are then refused).
func (s *Server) templateFilesDir() string {
	if s.dataDir == "" {
		return ""
	}
	return filepath.Join(s.dataDir, "templates")
}
