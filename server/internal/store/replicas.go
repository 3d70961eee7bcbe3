package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Replica is one Berth server of a multi-replica install (docs/scale.md):
// where the others reach it, and until when it is live. Its row is renewed
// every few seconds; a replica whose row expired is gone.
type Replica struct {
	ID        string
	HTTPURL   string
	RelayAddr string
	StartedAt time.Time
	RenewedAt time.Time
	ExpiresAt time.Time
}

type replicaRow struct {
	ID        string `gorm:"primaryKey"`
	HTTPURL   string `gorm:"column:http_url"`
	RelayAddr string
	StartedAt dbTime
	RenewedAt dbTime
	ExpiresAt dbTime
}

func (replicaRow) TableName() string { return "replicas" }

func (r replicaRow) replica() Replica {
	return Replica{ID: r.ID, HTTPURL: r.HTTPURL, RelayAddr: r.RelayAddr, StartedAt: r.StartedAt.Time,
		RenewedAt: r.RenewedAt.Time, ExpiresAt: r.ExpiresAt.Time}
}

// Live reports whether the replica's row had not expired at now.
func (r Replica) Live(now time.Time) bool { return r.ExpiresAt.After(now) }

// RenewReplica writes r's row (inserted the first time, renewed after):
// where it is reached and until when it is live. StartedAt is kept from the
// first write.
func (s *Store) RenewReplica(ctx context.Context, r Replica) error {
	row := replicaRow{ID: r.ID, HTTPURL: r.HTTPURL, RelayAddr: r.RelayAddr,
		StartedAt: timeValue(r.StartedAt.UTC().Truncate(time.Microsecond)),
		RenewedAt: timeValue(r.RenewedAt.UTC().Truncate(time.Microsecond)),
		ExpiresAt: timeValue(r.ExpiresAt.UTC().Truncate(time.Microsecond))}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"http_url", "relay_addr", "renewed_at", "expires_at"}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("store: renew replica %s: %w", r.ID, err)
	}
	return nil
}

// Replica returns one replica's row (live or not), or ErrNotFound.
func (s *Store) Replica(ctx context.Context, id string) (Replica, error) {
	var row replicaRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return Replica{}, fmt.Errorf("store: replica %s: %w", id, translate(err))
	}
	return row.replica(), nil
}

// Replicas returns every replica's row, live or not, by id.
func (s *Store) Replicas(ctx context.Context) ([]Replica, error) {
	var rows []replicaRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	out := make([]Replica, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.replica())
	}
	return out, nil
}

// DeleteReplica removes a replica's row and the agent leases and stack
// locks it holds (a replica that stops).
func (s *Store) DeleteReplica(ctx context.Context, id string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("replica_id = ?", id).Delete(&agentLeaseRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("replica_id = ?", id).Delete(&stackLockRow{}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", id).Delete(&replicaRow{}).Error
	})
	if err != nil {
		return fmt.Errorf("store: delete replica %s: %w", id, err)
	}
	return nil
}

// DeleteReplicasExpiredBefore removes the rows of replicas that expired
// before t (they died without saying so) and the leases and stack locks
// they held; it
// returns how many replicas it removed.
func (s *Store) DeleteReplicasExpiredBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ids []string
		if err := tx.Model(&replicaRow{}).Where("expires_at < ?", timeValue(t.UTC())).Pluck("id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Where("replica_id IN ?", ids).Delete(&agentLeaseRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("replica_id IN ?", ids).Delete(&stackLockRow{}).Error; err != nil {
			return err
		}
		res := tx.Where("id IN ?", ids).Delete(&replicaRow{})
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete expired replicas: %w", err)
	}
	return n, nil
}

// AgentLease names the replica holding an edge agent's connection (one
// live agent per environment across every replica) and what the agent told
// about itself when it connected.
type AgentLease struct {
	EnvironmentID int64
	ReplicaID     string
	AgentID       string
	AgentName     string
	AgentVersion  string
	Capabilities  []string
	Remote        string
	ConnectedAt   time.Time
	ClaimedAt     time.Time
}

// HeldLease is a lease with its replica's row: where the holder is reached
// and whether it is live. Holder.ID is empty when the replica has no row.
type HeldLease struct {
	AgentLease
	Holder Replica
}

// Live reports whether the lease's replica was live at now.
func (h HeldLease) Live(now time.Time) bool { return h.Holder.ID != "" && h.Holder.Live(now) }

type agentLeaseRow struct {
	EnvironmentID int64 `gorm:"primaryKey;autoIncrement:false"`
	ReplicaID     string
	AgentID       string
	AgentName     string
	AgentVersion  string
	Capabilities  string
	Remote        string
	ConnectedAt   dbTime
	ClaimedAt     dbTime
}

func (agentLeaseRow) TableName() string { return "agent_leases" }

func leaseRow(l AgentLease) (agentLeaseRow, error) {
	caps, err := jsonList(l.Capabilities)
	if err != nil {
		return agentLeaseRow{}, fmt.Errorf("agent capabilities: %w", err)
	}
	return agentLeaseRow{EnvironmentID: l.EnvironmentID, ReplicaID: l.ReplicaID, AgentID: l.AgentID, AgentName: l.AgentName,
		AgentVersion: l.AgentVersion, Capabilities: caps, Remote: l.Remote,
		ConnectedAt: timeValue(l.ConnectedAt.UTC().Truncate(time.Microsecond)),
		ClaimedAt:   timeValue(l.ClaimedAt.UTC().Truncate(time.Microsecond))}, nil
}

func (r agentLeaseRow) lease() AgentLease {
	caps, err := parseList(r.Capabilities)
	if err != nil {
		caps = []string{}
	}
	return AgentLease{EnvironmentID: r.EnvironmentID, ReplicaID: r.ReplicaID, AgentID: r.AgentID, AgentName: r.AgentName,
		AgentVersion: r.AgentVersion, Capabilities: caps, Remote: r.Remote, ConnectedAt: r.ConnectedAt.Time,
		ClaimedAt: r.ClaimedAt.Time}
}

// ClaimAgentLease makes l (ReplicaID: the claiming replica) its
// environment's lease, in one transaction, when there is no lease, or the
// lease's replica is not live at l.ClaimedAt, or the lease is already the
// claiming replica's, or its agent is l's agent (the same agent came back
// through another replica). Otherwise the lease is left alone and returned
// with claimed false: another agent is connected to a live replica. A
// missing environment is ErrNotFound.
func (s *Store) ClaimAgentLease(ctx context.Context, l AgentLease) (held HeldLease, claimed bool, err error) {
	row, err := leaseRow(l)
	if err != nil {
		return HeldLease{}, false, fmt.Errorf("store: claim agent lease: %w", err)
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			claimed = true
			return nil
		}
		// There is a lease: read it locked (PostgreSQL; a SQLite write
		// transaction is alone anyway), with its replica.
		var cur agentLeaseRow
		q := tx.Where("environment_id = ?", l.EnvironmentID)
		if s.dialect == dialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Take(&cur).Error; err != nil {
			return err
		}
		held.AgentLease = cur.lease()
		var rep replicaRow
		switch err := tx.Where("id = ?", cur.ReplicaID).Take(&rep).Error; {
		case err == nil:
			held.Holder = rep.replica()
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return err
		}
		if cur.ReplicaID != l.ReplicaID && cur.AgentID != l.AgentID && held.Live(l.ClaimedAt) {
			return nil // another agent, on a live replica: refused
		}
		claimed = true
		return tx.Model(&agentLeaseRow{}).Where("environment_id = ?", l.EnvironmentID).Updates(map[string]any{
			"replica_id": row.ReplicaID, "agent_id": row.AgentID, "agent_name": row.AgentName,
			"agent_version": row.AgentVersion, "capabilities": row.Capabilities, "remote": row.Remote,
			"connected_at": row.ConnectedAt, "claimed_at": row.ClaimedAt,
		}).Error
	})
	if err != nil {
		if isForeignKeyViolation(err) {
			return HeldLease{}, false, fmt.Errorf("store: claim agent lease of environment %d: %w", l.EnvironmentID, ErrNotFound)
		}
		return HeldLease{}, false, fmt.Errorf("store: claim agent lease of environment %d: %w", l.EnvironmentID, translate(err))
	}
	if claimed {
		held = HeldLease{AgentLease: row.lease()}
	}
	return held, claimed, nil
}

// ReleaseAgentLease removes an environment's lease if replicaID holds it
// (an agent that disconnected from it); a lease another replica took over
// stays.
func (s *Store) ReleaseAgentLease(ctx context.Context, envID int64, replicaID string) error {
	err := s.db.WithContext(ctx).Where("environment_id = ? AND replica_id = ?", envID, replicaID).Delete(&agentLeaseRow{}).Error
	if err != nil {
		return fmt.Errorf("store: release agent lease of environment %d: %w", envID, err)
	}
	return nil
}

// DeleteAgentLease removes an environment's lease whichever replica holds
// it (the edge token was rotated).
func (s *Store) DeleteAgentLease(ctx context.Context, envID int64) error {
	if err := s.db.WithContext(ctx).Where("environment_id = ?", envID).Delete(&agentLeaseRow{}).Error; err != nil {
		return fmt.Errorf("store: delete agent lease of environment %d: %w", envID, err)
	}
	return nil
}

// AgentLease returns an environment's lease with its replica's row, or
// ErrNotFound when no replica holds the environment's agent.
func (s *Store) AgentLease(ctx context.Context, envID int64) (HeldLease, error) {
	var row agentLeaseRow
	if err := s.db.WithContext(ctx).Where("environment_id = ?", envID).Take(&row).Error; err != nil {
		return HeldLease{}, fmt.Errorf("store: agent lease of environment %d: %w", envID, translate(err))
	}
	h := HeldLease{AgentLease: row.lease()}
	var rep replicaRow
	switch err := s.db.WithContext(ctx).Where("id = ?", row.ReplicaID).Take(&rep).Error; {
	case err == nil:
		h.Holder = rep.replica()
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return HeldLease{}, fmt.Errorf("store: agent lease of environment %d: %w", envID, err)
	}
	return h, nil
}

// AgentLeases returns every lease with its replica's row (the reconcile
// pass of each replica reads them all).
func (s *Store) AgentLeases(ctx context.Context) ([]HeldLease, error) {
	var rows []agentLeaseRow
	if err := s.db.WithContext(ctx).Order("environment_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: agent leases: %w", err)
	}
	reps, err := s.Replicas(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Replica, len(reps))
	for _, r := range reps {
		byID[r.ID] = r
	}
	out := make([]HeldLease, 0, len(rows))
	for _, r := range rows {
		out = append(out, HeldLease{AgentLease: r.lease(), Holder: byID[r.ReplicaID]})
	}
	return out, nil
}
