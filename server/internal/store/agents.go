package store

import (
	"context"
	"fmt"
	"time"
)

// AgentSeen is what an agent told about itself when it last talked to Berth.
type AgentSeen struct {
	ID           string
	Name         string
	Version      string
	Capabilities []string
	LastSeen     time.Time
}

// SetAgentTokenHash records the digest of an environment's new edge token
// (replacing the previous one). It leaves UpdatedAt alone: the connection
// settings did not change. A missing environment is ErrNotFound.
func (s *Store) SetAgentTokenHash(ctx context.Context, id int64, hash string) error {
	err := oneRow(s.db.WithContext(ctx).Model(&environmentRow{}).Where("id = ?", id).
		Update("agent_token_hash", hash))
	if err != nil {
		return fmt.Errorf("store: set agent token of environment %d: %w", id, err)
	}
	return nil
}

// EnvironmentByAgentTokenHash returns the environment whose edge token has
// the digest hash, or ErrNotFound.
func (s *Store) EnvironmentByAgentTokenHash(ctx context.Context, hash string) (Environment, error) {
	if hash == "" {
		return Environment{}, fmt.Errorf("store: environment by agent token: %w", ErrNotFound)
	}
	e, err := s.getEnvironment(ctx, s.db.Where("agent_token_hash = ?", hash))
	if err != nil {
		return Environment{}, fmt.Errorf("store: environment by agent token: %w", err)
	}
	return e, nil
}

// SetAgentSeen records what an environment's agent told and when it was
// last seen. It leaves UpdatedAt alone (the cached engine connection stays).
func (s *Store) SetAgentSeen(ctx context.Context, id int64, a AgentSeen) error {
	caps, err := jsonList(a.Capabilities)
	if err != nil {
		return fmt.Errorf("store: agent capabilities: %w", err)
	}
	seen := a.LastSeen.UTC().Truncate(time.Microsecond)
	err = oneRow(s.db.WithContext(ctx).Model(&environmentRow{}).Where("id = ?", id).Updates(map[string]any{
		"agent_id": a.ID, "agent_name": a.Name, "agent_version": a.Version, "agent_capabilities": caps,
		"agent_last_seen": nullTimeValue(&seen),
	}))
	if err != nil {
		return fmt.Errorf("store: set agent of environment %d: %w", id, err)
	}
	return nil
}

// TouchAgent records only when an environment's agent was last seen.
func (s *Store) TouchAgent(ctx context.Context, id int64, at time.Time) error {
	seen := at.UTC().Truncate(time.Microsecond)
	err := oneRow(s.db.WithContext(ctx).Model(&environmentRow{}).Where("id = ?", id).
		Update("agent_last_seen", nullTimeValue(&seen)))
	if err != nil {
		return fmt.Errorf("store: touch agent of environment %d: %w", id, err)
	}
	return nil
}
