package api

import "github.com/berth-dev/berth/server/internal/stacks"

// Perm is the permission a route requires: a "<resource>:<action>" pair
// checked against the route's environment, or one of the pseudo-permissions.
type Perm string

// Pseudo-permissions.
const (
	// Public routes need no sign-in (health, sign-in itself).
	Public Perm = "public"
	// Authenticated routes need a signed-in user and no particular permission
	// (a user's own API tokens).
	Authenticated Perm = "authenticated"
)

// Selector says how a route names its environment.
type Selector int

// The environment selectors.
const (
	NoEnv      Selector = iota // not about one environment: the permission must hold for all of them
	EnvQuery                   // query parameter env (default 1)
	EnvIDQuery                 // query parameter envId (exec endpoints)
	EnvPath                    // path parameter {id} of /api/environments/{id}
	AnyEnv                     // lists across environments: the permission must hold on at least one; the handler filters
)

// Quiet marks a state-changing route that is deliberately not audited by the
// generic recorder (it records itself, or it changes nothing worth a line).
const Quiet = "-"

// route is one entry of THE route table.
type route struct {
	Method string
	Path   string
	Perm   Perm
	Env    Selector
	Audit  string // action recorded in the audit log after success ("" for reads)
	Setup  bool   // open while no user exists, to the holder of the setup token
	h      handler
}

// routes is the route table: every endpoint, with its permission, its
// environment selector and, for changes, its audit action.
func (s *Server) routes() []route {
	table := []route{
		{"GET", "/api/health", Public, NoEnv, "", false, s.health},

		{"POST", "/api/auth/login", Public, NoEnv, Quiet, false, s.login},
		{"POST", "/api/auth/logout", Public, NoEnv, Quiet, false, s.logout},
		{"GET", "/api/auth/session", Public, NoEnv, "", false, s.session},
		{"GET", "/api/auth/providers", Public, NoEnv, "", false, s.providers},
		{"GET", "/api/auth/settings", "settings:view", NoEnv, "", false, s.getAuthSettings},
		{"PUT", "/api/auth/settings", "settings:edit", NoEnv, "auth.settings", false, s.putAuthSettings},
		{"GET", "/api/auth/tokens", Authenticated, NoEnv, "", false, s.listTokens},
		{"POST", "/api/auth/tokens", Authenticated, NoEnv, "token.create", false, s.createToken},
		{"DELETE", "/api/auth/tokens/{id}", Authenticated, NoEnv, "token.revoke", false, s.revokeToken},

		{"GET", "/api/auth/ldap", "settings:view", NoEnv, "", false, s.listLDAP},
		{"POST", "/api/auth/ldap", "settings:edit", NoEnv, "ldap.create", false, s.createLDAP},
		{"GET", "/api/auth/ldap/{id}", "settings:view", NoEnv, "", false, s.getLDAP},
		{"PATCH", "/api/auth/ldap/{id}", "settings:edit", NoEnv, "ldap.update", false, s.patchLDAP},
		{"DELETE", "/api/auth/ldap/{id}", "settings:edit", NoEnv, "ldap.delete", false, s.deleteLDAP},
		{"POST", "/api/auth/ldap/{id}/test", "settings:edit", NoEnv, Quiet, false, s.testLDAP},

		{"GET", "/api/auth/oidc", "settings:view", NoEnv, "", false, s.listOIDC},
		{"POST", "/api/auth/oidc", "settings:edit", NoEnv, "oidc.create", false, s.createOIDC},
		{"GET", "/api/auth/oidc/callback", Public, NoEnv, "", false, s.oidcCallback},
		{"GET", "/api/auth/oidc/{id}", "settings:view", NoEnv, "", false, s.getOIDC},
		{"PATCH", "/api/auth/oidc/{id}", "settings:edit", NoEnv, "oidc.update", false, s.patchOIDC},
		{"DELETE", "/api/auth/oidc/{id}", "settings:edit", NoEnv, "oidc.delete", false, s.deleteOIDC},
		{"POST", "/api/auth/oidc/{id}/test", "settings:edit", NoEnv, Quiet, false, s.testOIDC},
		{"GET", "/api/auth/oidc/{id}/initiate", Public, NoEnv, "", false, s.initiateOIDC},
		{"POST", "/api/auth/oidc/{id}/initiate", Public, NoEnv, Quiet, false, s.initiateOIDC},

		{"GET", "/api/users", "users:view", NoEnv, "", false, s.listUsers},
		{"POST", "/api/users", "users:create", NoEnv, "user.create", true, s.createUser},
		{"GET", "/api/users/{id}", "users:view", NoEnv, "", false, s.getUser},
		{"PUT", "/api/users/{id}", "users:edit", NoEnv, "user.update", false, s.updateUser},
		{"DELETE", "/api/users/{id}", "users:delete", NoEnv, "user.delete", false, s.deleteUser},
		{"GET", "/api/users/{id}/roles", "users:view", NoEnv, "", false, s.listUserRoles},
		{"POST", "/api/users/{id}/roles", "users:edit", NoEnv, "user.role.assign", false, s.assignRole},
		{"DELETE", "/api/users/{id}/roles", "users:edit", NoEnv, "user.role.unassign", false, s.unassignRole},
		{"GET", "/api/roles", "users:view", NoEnv, "", false, s.listRoles},
		{"POST", "/api/roles", "users:create", NoEnv, "role.create", false, s.createRole},
		{"GET", "/api/roles/{id}", "users:view", NoEnv, "", false, s.getRole},
		{"PUT", "/api/roles/{id}", "users:edit", NoEnv, "role.update", false, s.updateRole},
		{"DELETE", "/api/roles/{id}", "users:delete", NoEnv, "role.delete", false, s.deleteRole},

		{"GET", "/api/license", Authenticated, NoEnv, "", false, s.getLicense},
		{"POST", "/api/license", "license:manage", NoEnv, "license.install", false, s.installLicense},
		{"DELETE", "/api/license", "license:manage", NoEnv, "license.remove", false, s.removeLicense},
		{"GET", "/api/audit", "audit_logs:view", NoEnv, "", false, s.listAudit},

		{"GET", "/api/environments", "environments:view", AnyEnv, "", false, s.listEnvironments},
		{"POST", "/api/environments", "environments:create", NoEnv, "environment.create", false, s.createEnvironment},
		{"POST", "/api/environments/test", "environments:create", NoEnv, Quiet, false, s.testNewEnvironment},
		{"GET", "/api/environments/{id}", "environments:view", EnvPath, "", false, s.getEnvironment},
		{"PUT", "/api/environments/{id}", "environments:edit", EnvPath, "environment.update", false, s.updateEnvironment},
		{"DELETE", "/api/environments/{id}", "environments:delete", EnvPath, "environment.delete", false, s.deleteEnvironment},
		{"POST", "/api/environments/{id}/test", "environments:edit", EnvPath, Quiet, false, s.testEnvironment},
		{"POST", "/api/environments/{id}/agent-token", "environments:edit", EnvPath, "environment.agent_token", false, s.issueAgentToken},
		{"GET", "/api/environments/{id}/agent-status", "environments:view", EnvPath, "", false, s.agentStatus},
		{"GET", "/api/environments/{id}/status", "environments:view", EnvPath, "", false, s.environmentStatus},
		{"GET", "/api/environments/{id}/update-check", "environments:view", EnvPath, "", false, s.getUpdateCheck},
		{"POST", "/api/environments/{id}/update-check", "environments:edit", EnvPath, "environment.update_check", false, s.setUpdateCheck},
		{"GET", "/api/environments/{id}/image-prune", "environments:view", EnvPath, "", false, s.getImagePrune},
		{"POST", "/api/environments/{id}/image-prune", "environments:edit", EnvPath, "environment.image_prune", false, s.setImagePrune},
		{"PUT", "/api/environments/{id}/image-prune", "images:remove", EnvPath, "image.prune", false, s.pruneImagesNow},
		{"GET", "/api/environments/{id}/disk-warning", "environments:view", EnvPath, "", false, s.getDiskWarning},
		{"POST", "/api/environments/{id}/disk-warning", "environments:edit", EnvPath, "environment.disk_warning", false, s.setDiskWarning},
		{"GET", "/api/environments/{id}/timezone", "environments:view", EnvPath, "", false, s.getTimezone},
		{"POST", "/api/environments/{id}/timezone", "environments:edit", EnvPath, "environment.timezone", false, s.setTimezone},

		// Every environment the caller may view, or ?env=N alone (checked by the handler).
		{"GET", "/api/dashboard/stats", dashboardPerm, AnyEnv, "", false, s.dashboardStats},

		{"GET", "/api/containers", "containers:view", EnvQuery, "", false, s.listContainers},
		{"POST", "/api/containers", "containers:create", EnvQuery, "container.create", false, s.createContainer},
		{"GET", "/api/containers/stats", "containers:view", EnvQuery, "", false, s.allContainerStats},
		{"GET", "/api/containers/stats/stream", "containers:view", EnvQuery, "", false, s.streamContainerStats},
		{"GET", "/api/containers/pending-updates", "containers:view", EnvQuery, "", false, s.listPendingUpdates},
		{"GET", "/api/containers/{id}", "containers:inspect", EnvQuery, "", false, s.inspectContainer},
		{"GET", "/api/containers/{id}/inspect", "containers:inspect", EnvQuery, "", false, s.inspectContainer},
		{"DELETE", "/api/containers/{id}", "containers:remove", EnvQuery, "container.remove", false, s.removeContainer},
		{"POST", "/api/containers/{id}/start", "containers:start", EnvQuery, "container.start", false, s.containerAction},
		{"POST", "/api/containers/{id}/stop", "containers:stop", EnvQuery, "container.stop", false, s.containerAction},
		{"POST", "/api/containers/{id}/restart", "containers:restart", EnvQuery, "container.restart", false, s.containerAction},
		{"POST", "/api/containers/{id}/pause", "containers:stop", EnvQuery, "container.pause", false, s.containerAction},
		{"POST", "/api/containers/{id}/unpause", "containers:start", EnvQuery, "container.unpause", false, s.containerAction},
		{"POST", "/api/containers/{id}/kill", "containers:stop", EnvQuery, "container.kill", false, s.killContainer},
		{"POST", "/api/containers/{id}/rename", "containers:edit", EnvQuery, "container.rename", false, s.renameContainer},
		{"GET", "/api/containers/{id}/stats", "containers:view", EnvQuery, "", false, s.containerStats},
		{"GET", "/api/containers/{id}/logs", "containers:logs", EnvQuery, "", false, s.containerLogs},
		{"GET", "/api/containers/{id}/logs/stream", "containers:logs", EnvQuery, "", false, s.streamContainerLogs},
		{"GET", "/api/containers/{id}/top", "containers:inspect", EnvQuery, "", false, s.containerTop},
		{"POST", "/api/containers/{id}/exec", "containers:exec", EnvIDQuery, "container.exec", false, s.createExec},
		{"GET", "/api/containers/exec/{execId}/attach", "containers:exec", EnvIDQuery, "", false, s.attachExec},
		{"POST", "/api/containers/exec/{execId}/resize", "containers:exec", EnvIDQuery, Quiet, false, s.resizeExec},

		{"GET", "/api/images", "images:view", EnvQuery, "", false, s.listImages},
		{"POST", "/api/images/scan", "images:inspect", EnvQuery, "image.scan", false, s.scanImage},
		{"GET", "/api/images/scan", "images:inspect", EnvQuery, "", false, s.scanResult},
		{"GET", "/api/settings/scanner", "settings:view", EnvQuery, "", false, s.getScannerSetting},
		{"POST", "/api/settings/scanner", "settings:edit", EnvQuery, "settings.scanner", false, s.setScannerSetting},
		{"POST", "/api/images/pull", "images:pull", EnvQuery, "image.pull", false, s.pullImage},
		{"POST", "/api/images/push", "images:push", EnvQuery, "image.push", false, s.pushImage},
		{"GET", "/api/images/{id}", "images:inspect", EnvQuery, "", false, s.inspectImage},
		{"DELETE", "/api/images/{id}", "images:remove", EnvQuery, "image.remove", false, s.removeImage},
		{"POST", "/api/images/{id}/tag", "images:build", EnvQuery, "image.tag", false, s.tagImage},
		{"GET", "/api/images/{id}/history", "images:inspect", EnvQuery, "", false, s.imageHistory},
		{"POST", "/api/prune/images", "images:remove", EnvQuery, "image.prune", false, s.pruneImages},
		{"GET", "/api/jobs/{jobId}", Authenticated, NoEnv, "", false, s.getJob},

		{"GET", "/api/registries", "registries:view", NoEnv, "", false, s.listRegistries},
		{"POST", "/api/registries", "registries:create", NoEnv, "registry.create", false, s.createRegistry},
		{"POST", "/api/registries/test", "registries:edit", EnvQuery, Quiet, false, s.testRegistry},
		{"GET", "/api/registries/{id}", "registries:view", NoEnv, "", false, s.getRegistry},
		{"PUT", "/api/registries/{id}", "registries:edit", NoEnv, "registry.update", false, s.updateRegistry},
		{"DELETE", "/api/registries/{id}", "registries:delete", NoEnv, "registry.delete", false, s.deleteRegistry},

		{"GET", "/api/stacks", "stacks:view", EnvQuery, "", false, s.listStacks},
		{"POST", "/api/stacks", "stacks:create", EnvQuery, "stack.create", false, s.createStack},
		{"POST", "/api/stacks/scan", "stacks:create", EnvQuery, Quiet, false, s.scanStacks},
		// The handler checks stacks:create in the body's environmentId (else ?env).
		{"POST", "/api/stacks/adopt", "stacks:create", AnyEnv, "stack.adopt", false, s.adoptStack},
		{"GET", "/api/stacks/{name}/compose", "stacks:view", EnvQuery, "", false, s.getStackCompose},
		{"PUT", "/api/stacks/{name}/compose", "stacks:edit", EnvQuery, "stack.update", false, s.updateStackCompose},
		{"DELETE", "/api/stacks/{name}", "stacks:remove", EnvQuery, "stack.delete", false, s.deleteStack},
		{"POST", "/api/stacks/{name}/start", "stacks:start", EnvQuery, "stack.start", false, s.stackAction(stacks.Start)},
		{"POST", "/api/stacks/{name}/stop", "stacks:stop", EnvQuery, "stack.stop", false, s.stackAction(stacks.Stop)},
		{"POST", "/api/stacks/{name}/restart", "stacks:start", EnvQuery, "stack.restart", false, s.restartStack},
		{"POST", "/api/stacks/{name}/down", "stacks:stop", EnvQuery, "stack.down", false, s.stackDown},
		{"POST", "/api/stacks/{name}/deploy", "stacks:start", EnvQuery, "stack.deploy", false, s.deployStack},
		{"GET", "/api/stacks/{name}/env", "stacks:view", EnvQuery, "", false, s.getStackEnv},
		{"PUT", "/api/stacks/{name}/env", "stacks:edit", EnvQuery, "stack.env", false, s.putStackEnv},
		{"GET", "/api/stacks/{name}/env/raw", "stacks:view", EnvQuery, "", false, s.getStackRawEnv},
		{"PUT", "/api/stacks/{name}/env/raw", "stacks:edit", EnvQuery, "stack.env", false, s.putStackRawEnv},

		{"GET", "/api/git/credentials", "git:view", NoEnv, "", false, s.listGitCredentials},
		{"POST", "/api/git/credentials", "git:create", NoEnv, "git_credential.create", false, s.saveGitCredential},
		{"GET", "/api/git/credentials/{id}", "git:view", NoEnv, "", false, s.getGitCredential},
		{"PUT", "/api/git/credentials/{id}", "git:edit", NoEnv, "git_credential.update", false, s.saveGitCredential},
		{"DELETE", "/api/git/credentials/{id}", "git:delete", NoEnv, "git_credential.delete", false, s.deleteGitCredential},
		{"GET", "/api/git/repositories", "git:view", NoEnv, "", false, s.listGitRepositories},
		{"POST", "/api/git/repositories", "git:create", NoEnv, "git_repository.create", false, s.saveGitRepository},
		{"GET", "/api/git/repositories/{id}", "git:view", NoEnv, "", false, s.getGitRepository},
		{"PUT", "/api/git/repositories/{id}", "git:edit", NoEnv, "git_repository.update", false, s.saveGitRepository},
		{"DELETE", "/api/git/repositories/{id}", "git:delete", NoEnv, "git_repository.delete", false, s.deleteGitRepository},
		{"GET", "/api/git/stacks", "git:view", NoEnv, "", false, s.listGitStacks},
		{"POST", "/api/git/stacks", "git:create", NoEnv, "git_stack.create", false, s.createGitStack},
		{"GET", "/api/git/stacks/{id}", "git:view", NoEnv, "", false, s.getGitStack},
		{"PUT", "/api/git/stacks/{id}", "git:edit", NoEnv, "git_stack.update", false, s.updateGitStack},
		{"DELETE", "/api/git/stacks/{id}", "git:delete", NoEnv, "git_stack.delete", false, s.deleteGitStack},
		{"POST", "/api/git/stacks/{id}/deploy", "git:edit", NoEnv, "git_stack.deploy", false, s.deployGitStack(false)},
		{"POST", "/api/git/stacks/{id}/sync", "git:edit", NoEnv, "git_stack.sync", false, s.deployGitStack(true)},
		{"POST", "/api/git/webhook/{id}", Public, NoEnv, Quiet, false, s.gitWebhook(false)},
		{"GET", "/api/git/webhook/{id}", Public, NoEnv, Quiet, false, s.gitWebhook(false)},
		{"POST", "/api/git/stacks/{id}/webhook", Public, NoEnv, Quiet, false, s.gitWebhook(true)},
		{"GET", "/api/git/stacks/{id}/webhook", Public, NoEnv, Quiet, false, s.gitWebhook(true)},

		{"GET", "/api/volumes", "volumes:view", EnvQuery, "", false, s.listVolumes},
		{"POST", "/api/volumes", "volumes:create", EnvQuery, "volume.create", false, s.createVolume},
		{"GET", "/api/volumes/{name}", "volumes:inspect", EnvQuery, "", false, s.inspectVolume},
		{"GET", "/api/volumes/{name}/inspect", "volumes:inspect", EnvQuery, "", false, s.inspectVolume},
		{"DELETE", "/api/volumes/{name}", "volumes:remove", EnvQuery, "volume.remove", false, s.removeVolume},

		{"GET", "/api/networks", "networks:view", EnvQuery, "", false, s.listNetworks},
		{"POST", "/api/networks", "networks:create", EnvQuery, "network.create", false, s.createNetwork},
		{"GET", "/api/networks/{id}", "networks:inspect", EnvQuery, "", false, s.inspectNetwork},
		{"GET", "/api/networks/{id}/inspect", "networks:inspect", EnvQuery, "", false, s.inspectNetwork},
		{"DELETE", "/api/networks/{id}", "networks:remove", EnvQuery, "network.remove", false, s.removeNetwork},
		{"POST", "/api/networks/{id}/connect", "networks:connect", EnvQuery, "network.connect", false, s.connectNetwork},
		{"POST", "/api/networks/{id}/disconnect", "networks:disconnect", EnvQuery, "network.disconnect", false, s.disconnectNetwork},

		{"GET", "/api/events", "containers:view", EnvQuery, "", false, s.streamEvents},

		// Schedules of every kind; a schedule's environment is checked by the
		// handler once the schedule is found (system schedules need the
		// permission everywhere).
		{"GET", "/api/schedules", "schedules:view", AnyEnv, "", false, s.listSchedules},
		{"GET", "/api/schedules/executions", "schedules:view", AnyEnv, "", false, s.listExecutions},
		{"GET", "/api/schedules/executions/{id}", "schedules:view", AnyEnv, "", false, s.getExecution},
		{"DELETE", "/api/schedules/executions/{id}", "schedules:edit", AnyEnv, "schedule.execution_delete", false, s.deleteExecution},
		{"GET", "/api/schedules/stream", "schedules:view", AnyEnv, "", false, s.streamSchedules},
		{"GET", "/api/schedules/settings", "settings:view", NoEnv, "", false, s.getScheduleSettings},
		{"PUT", "/api/schedules/settings", "settings:edit", NoEnv, "schedule.settings", false, s.putScheduleSettings},
		{"POST", "/api/schedules/system/{id}/toggle", "settings:edit", NoEnv, "schedule.toggle", false, s.toggleSystemSchedule},
		{"POST", "/api/schedules/{type}/{id}/run", "schedules:run", AnyEnv, "schedule.run", false, s.runSchedule},
		{"POST", "/api/schedules/{type}/{id}/toggle", "schedules:edit", AnyEnv, "schedule.toggle", false, s.toggleSchedule},
		{"DELETE", "/api/schedules/{type}/{id}", "schedules:edit", AnyEnv, "schedule.delete", false, s.deleteSchedule},

		// Backup configurations, their runs and restores; a configuration's
		// environment is checked by the handler once it is found.
		{"GET", "/api/backup/configs", "backups:view", AnyEnv, "", false, s.listBackupConfigs},
		{"POST", "/api/backup/configs", "backups:manage", AnyEnv, "backup_config.create", false, s.createBackupConfig},
		{"GET", "/api/backup/configs/{id}", "backups:view", AnyEnv, "", false, s.getBackupConfig},
		{"PUT", "/api/backup/configs/{id}", "backups:manage", AnyEnv, "backup_config.update", false, s.updateBackupConfig},
		{"DELETE", "/api/backup/configs/{id}", "backups:manage", AnyEnv, "backup_config.delete", false, s.deleteBackupConfig},
		{"POST", "/api/backup/configs/{id}/run", "backups:manage", AnyEnv, Quiet, false, s.runBackupConfig}, // the run records itself
		{"POST", "/api/backup/configs/{id}/stop", "backups:manage", AnyEnv, "backup_config.stop", false, s.stopBackupConfig},
		{"GET", "/api/backup/stack-path", "backups:view", AnyEnv, "", false, s.backupStackPath},
		{"GET", "/api/backup/stack-dir-listing", "backups:view", AnyEnv, "", false, s.backupStackDirListing},
		{"POST", "/api/backup/restore/preview", "backups:view", AnyEnv, Quiet, false, s.previewRestore},
		{"POST", "/api/backup/restore", "backups:manage", AnyEnv, Quiet, false, s.restoreBackup}, // the restore records itself
		{"POST", "/api/backup/restore/stop", "backups:manage", AnyEnv, "backup.restore_stop", false, s.stopRestore},

		// A container's auto-update configuration, by container name.
		{"GET", "/api/auto-update", "schedules:view", EnvQuery, "", false, s.listAutoUpdates},
		{"GET", "/api/auto-update/{containerName}", "schedules:view", EnvQuery, "", false, s.getAutoUpdate},
		{"POST", "/api/auto-update/{containerName}", "schedules:edit", EnvQuery, "auto_update.save", false, s.saveAutoUpdate},
		{"DELETE", "/api/auto-update/{containerName}", "schedules:edit", EnvQuery, "auto_update.delete", false, s.deleteAutoUpdate},
	}
	// Areas whose routes live beside their handlers (routes_*.go).
	for _, area := range [][]route{s.mfaRoutes(), s.notificationRoutes(), s.systemRoutes(), s.activityRoutes(),
		s.containerFilesRoutes(), s.volumeContentRoutes(), s.registryBrowserRoutes(), s.stackHelpersRoutes(),
		s.templatesRoutes(), s.openAPIRoutes(), s.inventoryRoutes(), s.envSecurityRoutes(), s.stackRootsRoutes(), s.outboundRoutes(),
		s.navigationRoutes(), s.aboutRoutes(), s.hostFilesRoutes(),
		s.containersRoutes(),
		s.scannerCacheRoutes(),
		s.imageScanRoutes(),
		s.scannerRoutes(),
		s.jobsRoutes(),
		s.selfUpdateRoutes(),
		s.hawserRoutes(),
		s.remoteStacksRoutes(),
		s.backupDestinationRoutes(), s.backupSnapshotRoutes()} {
		table = append(table, area...)
	}
	return table
}
