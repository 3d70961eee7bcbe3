package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// MetricSample is one sample of an environment's host, as the activity
// collector's sampler took it.
type MetricSample struct {
	EnvironmentID int64
	SampledAt     time.Time
	CPUPercent    float64
	MemoryPercent float64
	MemoryUsed    uint64 // bytes
	MemoryTotal   uint64 // bytes
}

// MetricTop is a container of an environment's latest sample, ranked by its
// CPU and memory use.
type MetricTop struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	CPUPercent    float64 `json:"cpuPercent"`
	MemoryPercent float64 `json:"memoryPercent"`
	MemoryUsage   uint64  `json:"memoryUsage"`
}

// MetricHistory is an environment's stored samples, oldest first, and the
// ranking of its latest sample (nil before the first one).
type MetricHistory struct {
	Samples []MetricSample
	Top     []MetricTop
}

type metricSampleRow struct {
	EnvironmentID int64 `gorm:"primaryKey;autoIncrement:false"`
	SampledAt     dbTime
	CPUPercent    float64 `gorm:"column:cpu_percent"`
	MemoryPercent float64
	MemoryUsed    int64
	MemoryTotal   int64
}

func (metricSampleRow) TableName() string { return "metric_samples" }

func (r metricSampleRow) sample() MetricSample {
	return MetricSample{EnvironmentID: r.EnvironmentID, SampledAt: r.SampledAt.Time, CPUPercent: r.CPUPercent,
		MemoryPercent: r.MemoryPercent, MemoryUsed: uint64(max(r.MemoryUsed, 0)), MemoryTotal: uint64(max(r.MemoryTotal, 0))}
}

// metricClaimRow is an environment's latest sampling round: the replica
// that claimed it and when, and the ranking of the latest sample stored
// (JSON; "" before the first).
type metricClaimRow struct {
	EnvironmentID int64 `gorm:"primaryKey;autoIncrement:false"`
	ReplicaID     string
	ClaimedAt     dbTime
	Top           string
}

func (metricClaimRow) TableName() string { return "metric_claims" }

// ClaimMetricsRound claims the sampling round of environment envID at time
// at for replica replicaID (the rounds come every interval), and reports
// whether it got it: only the replica that claims a round samples the
// engine, so that replicas sharing the database sample each environment
// once per round. The round is claimed when the environment collects
// metrics and
//   - no round was claimed yet, or
//   - the last one was claimed by replicaID itself at least half an interval
//     before (its next round), or by a replica that is no longer live (no
//     row in replicas, or an expired one: a single Berth has none) at least
//     half an interval before, or
//   - the last one is at least an interval and a quarter old, whoever
//     claimed it (a live replica that stopped sampling it: the agent of an
//     edge environment moved to another replica, or the sampler is stuck).
//
// Concurrent claims of one round (several replicas, one database) make one
// winner on both dialects. A missing environment, or one whose
// collectMetrics is off, is never claimed.
func (s *Store) ClaimMetricsRound(ctx context.Context, envID int64, replicaID string, at time.Time, interval time.Duration) (bool, error) {
	at = at.UTC().Truncate(time.Microsecond)
	claimed := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The environment's row is read locked (PostgreSQL; a SQLite write
		// transaction is alone anyway), so that a change switching its
		// metrics off (which deletes the claim and the samples) either
		// comes after this claim or is seen by it.
		q := tx.Model(&environmentRow{}).Where("id = ?", envID)
		if s.dialect == dialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "SHARE"})
		}
		var on []bool
		if err := q.Pluck("collect_metrics", &on).Error; err != nil {
			return err
		}
		if len(on) == 0 || !on[0] {
			return nil
		}
		// An UPDATE whose condition is on the row itself: of concurrent
		// claims, the first takes the row; the others, on PostgreSQL, see
		// its new claimed_at once it commits, and their condition fails.
		res := tx.Model(&metricClaimRow{}).
			Where(`environment_id = ? AND ((claimed_at <= ? AND (replica_id = ? OR NOT EXISTS (
				SELECT 1 FROM replicas WHERE replicas.id = metric_claims.replica_id AND replicas.expires_at > ?)))
				OR claimed_at <= ?)`,
				envID, timeValue(at.Add(-interval/2)), replicaID, timeValue(at), timeValue(at.Add(-interval-interval/4))).
			Updates(map[string]any{"replica_id": replicaID, "claimed_at": timeValue(at)})
		if res.Error != nil || res.RowsAffected == 1 {
			claimed = res.Error == nil
			return res.Error
		}
		// No row, or a round not due: the first round is the first insert's.
		row := metricClaimRow{EnvironmentID: envID, ReplicaID: replicaID, ClaimedAt: timeValue(at)}
		res = tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		claimed = res.Error == nil && res.RowsAffected == 1
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("store: claim metrics round of environment %d: %w", envID, err)
	}
	return claimed, nil
}

// RecordMetrics stores m and its ranking top as the sample of the round
// replicaID claimed at claimedAt (ClaimMetricsRound), and keeps the newest
// keep samples of the environment. It reports false, and stores nothing,
// when the round is no longer replicaID's: another replica claimed a later
// one, or the environment's metrics were switched off (or it is gone).
func (s *Store) RecordMetrics(ctx context.Context, replicaID string, claimedAt time.Time, m MetricSample, top []MetricTop, keep int) (bool, error) {
	if top == nil {
		top = []MetricTop{}
	}
	topJSON, err := json.Marshal(top)
	if err != nil {
		return false, fmt.Errorf("store: record metrics of environment %d: %w", m.EnvironmentID, err)
	}
	row := metricSampleRow{EnvironmentID: m.EnvironmentID, SampledAt: timeValue(m.SampledAt.UTC().Truncate(time.Microsecond)),
		CPUPercent: m.CPUPercent, MemoryPercent: m.MemoryPercent, MemoryUsed: int64(min(m.MemoryUsed, 1<<63-1)),
		MemoryTotal: int64(min(m.MemoryTotal, 1<<63-1))}
	stored := false
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The claim row first: while this transaction holds it, a change
		// switching the metrics off waits to delete it (and then the
		// samples, this one included); after such a change it is gone.
		res := tx.Model(&metricClaimRow{}).
			Where("environment_id = ? AND replica_id = ? AND claimed_at = ?", m.EnvironmentID, replicaID,
				timeValue(claimedAt.UTC().Truncate(time.Microsecond))).
			Update("top", string(topJSON))
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return err
		}
		stored = true
		// The keep-th newest sample's time: the ones before it go.
		oldest := tx.Model(&metricSampleRow{}).Select("sampled_at").Where("environment_id = ?", m.EnvironmentID).
			Order("sampled_at DESC").Limit(1).Offset(max(keep, 1) - 1)
		return tx.Where("environment_id = ? AND sampled_at < (?)", m.EnvironmentID, oldest).Delete(&metricSampleRow{}).Error
	})
	if err != nil {
		return false, fmt.Errorf("store: record metrics of environment %d: %w", m.EnvironmentID, translate(err))
	}
	return stored, nil
}

// ReleaseMetricsRounds gives up replicaID's hold on environment envID's
// sampling rounds, if it has it (the environment's agent moved to another
// replica, which samples it from now on): the next round goes to another
// replica half an interval after the last one, as when a replica dies,
// rather than once the last holder has missed a round.
func (s *Store) ReleaseMetricsRounds(ctx context.Context, envID int64, replicaID string) error {
	err := s.db.WithContext(ctx).Model(&metricClaimRow{}).Where("environment_id = ? AND replica_id = ?", envID, replicaID).
		Update("replica_id", "").Error
	if err != nil {
		return fmt.Errorf("store: release metrics rounds of environment %d: %w", envID, err)
	}
	return nil
}

// metricHistoryBatch bounds the environments of one query of
// MetricHistories (the parameters of one statement are bounded).
const metricHistoryBatch = 500

// MetricHistory returns the stored metrics of environment envID (empty when
// there are none).
func (s *Store) MetricHistory(ctx context.Context, envID int64) (MetricHistory, error) {
	all, err := s.MetricHistories(ctx, []int64{envID})
	if err != nil {
		return MetricHistory{}, err
	}
	return all[envID], nil
}

// MetricHistories returns the stored metrics of each environment of ids
// that has any, in two queries per metricHistoryBatch environments.
func (s *Store) MetricHistories(ctx context.Context, ids []int64) (map[int64]MetricHistory, error) {
	out := map[int64]MetricHistory{}
	for start := 0; start < len(ids); start += metricHistoryBatch {
		batch := ids[start:min(start+metricHistoryBatch, len(ids))]
		var samples []metricSampleRow
		err := s.db.WithContext(ctx).Where("environment_id IN ?", batch).Order("environment_id, sampled_at").
			Find(&samples).Error
		if err != nil {
			return nil, fmt.Errorf("store: metric histories: %w", err)
		}
		var claims []metricClaimRow
		if err := s.db.WithContext(ctx).Where("environment_id IN ?", batch).Find(&claims).Error; err != nil {
			return nil, fmt.Errorf("store: metric histories: %w", err)
		}
		for _, r := range samples {
			h := out[r.EnvironmentID]
			h.Samples = append(h.Samples, r.sample())
			out[r.EnvironmentID] = h
		}
		for _, c := range claims {
			if c.Top == "" {
				continue
			}
			var top []MetricTop
			if err := json.Unmarshal([]byte(c.Top), &top); err != nil {
				return nil, fmt.Errorf("store: metric histories: ranking of environment %d: %w", c.EnvironmentID, err)
			}
			if top == nil {
				top = []MetricTop{}
			}
			h := out[c.EnvironmentID]
			h.Top = top
			out[c.EnvironmentID] = h
		}
	}
	return out, nil
}

// deleteMetrics removes an environment's metrics: its claim first (a
// sample being recorded holds it: see RecordMetrics), then its samples.
func deleteMetrics(ctx context.Context, tx *gorm.DB, envID int64) error {
	if err := tx.WithContext(ctx).Where("environment_id = ?", envID).Delete(&metricClaimRow{}).Error; err != nil {
		return err
	}
	return tx.WithContext(ctx).Where("environment_id = ?", envID).Delete(&metricSampleRow{}).Error
}
