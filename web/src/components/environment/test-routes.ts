// Unit tests only: the server's answers to the environment settings reads and saves (stubApi routes).
/** The routes of environment 2's settings, as the server answers them. */
export function settingsRoutes(id = 2) {
  return {
    [`GET /api/environments/${id}/update-check`]: {
      settings: { enabled: true, cron: '0 4 * * *', autoUpdate: false, vulnerabilityCriteria: 'never' },
    },
    [`POST /api/environments/${id}/update-check`]: { success: true },
    [`GET /api/environments/${id}/image-prune`]: { settings: { enabled: false, cronExpression: '0 3 * * 0', pruneMode: 'dangling' } },
    [`POST /api/environments/${id}/image-prune`]: { success: true },
    [`PUT /api/environments/${id}/image-prune`]: { success: true },
    [`GET /api/environments/${id}/timezone`]: { timezone: 'UTC' },
    [`POST /api/environments/${id}/timezone`]: { success: true },
    [`GET /api/environments/${id}/disk-warning`]: {
      settings: { enabled: false, mode: 'percentage', thresholdPercent: 80, thresholdGb: 50 },
    },
    [`POST /api/environments/${id}/disk-warning`]: { success: true },
    'POST /api/containers/check-updates': { success: true, count: 2, notChecked: [] },
  };
}
