package store

import (
	"sync"
	"testing"

	"gorm.io/gorm/schema"
)

// TestRowModelsHaveNoAutoTimestamps guards the store's rule that it sets
// every timestamp itself: gorm must not fill CreatedAt or UpdatedAt on its own
// (it would write its clock, untruncated, and bump updated_at on touches that
// must leave it alone).
func TestRowModelsHaveNoAutoTimestamps(t *testing.T) {
	models := []any{
		&userRow{}, &sessionRow{}, &apiTokenRow{}, &environmentRow{}, &settingRow{}, &registryRow{},
		&stackRow{}, &stackSecretRow{}, &gitCredentialRow{}, &gitRepositoryRow{}, &gitStackRow{},
		&gitStackWithStack{}, &roleRow{}, &userRoleRow{}, &ldapConfigRow{}, &oidcProviderRow{},
		&autoUpdateRow{}, &scanResultRow{}, &auditRow{}, &executionRow{}, &envScheduleRow{}, &pendingUpdateRow{},
	}
	cache := &sync.Map{}
	for _, m := range models {
		sch, err := schema.Parse(m, cache, schema.NamingStrategy{})
		if err != nil {
			t.Fatalf("parse %T: %v", m, err)
		}
		for _, f := range sch.Fields {
			if f.AutoCreateTime != 0 || f.AutoUpdateTime != 0 {
				t.Errorf("%T.%s is filled by gorm (autoCreateTime %v, autoUpdateTime %v)", m, f.Name, f.AutoCreateTime, f.AutoUpdateTime)
			}
		}
		if len(sch.Relationships.Relations) != 0 {
			t.Errorf("%T has relationships %v; row models map columns only", m, sch.Relationships.Relations)
		}
	}
}
