package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// What a destination's routes run on its repository: initialise, test,
// rotate the key, maintenance tasks and verify (restic on the
// destination's environment).

// backupWhere is where restic runs for d: its environment's engine.
func (s *Server) backupWhere(ctx context.Context, d store.BackupDestination) (backup.Where, error) {
	if s.backup == nil {
		return backup.Where{}, errBackupsUnavailable
	}
	envID, err := s.store.BackupEnvironment(ctx, d)
	if err != nil {
		return backup.Where{}, err
	}
	env, err := s.environmentByID(ctx, envID)
	if err != nil {
		return backup.Where{}, err
	}
	cl, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return backup.Where{}, err
	}
	return backup.Where{EnvID: env.ID, Client: cl, Owner: s.node}, nil
}

// repositoryTimeout bounds the short restic operations a request waits for
// (init, test, key rotation); the long ones run as jobs.
const repositoryTimeout = 5 * time.Minute

// initRepository initialises d's repository and keeps the outcome as its
// test status.
func (s *Server) initRepository(ctx context.Context, d store.BackupDestination) (existed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, repositoryTimeout)
	defer cancel()
	w, err := s.backupWhere(ctx, d)
	if err == nil {
		existed, err = s.backup.Init(ctx, w, d.Repo())
	}
	test := store.BackupDestinationTest{At: time.Now().UTC(), Status: store.BackupTestSuccess, Message: "Repository initialized"}
	if existed {
		test.Message = "Repository already initialized"
	}
	if err != nil {
		test.Status, test.Message = store.BackupTestFailed, backupMessage(err)
	}
	s.recordBackupTest(ctx, d.ID, test)
	return existed, err
}

// testRepository opens d's repository and keeps the outcome.
func (s *Server) testRepository(ctx context.Context, d store.BackupDestination) store.BackupDestinationTest {
	ctx, cancel := context.WithTimeout(ctx, repositoryTimeout)
	defer cancel()
	test := s.repositoryTest(ctx, d)
	if d.ID != 0 {
		s.recordBackupTest(ctx, d.ID, test)
	}
	return test
}

// repositoryTest opens d's repository: success, needs_init or failed.
func (s *Server) repositoryTest(ctx context.Context, d store.BackupDestination) store.BackupDestinationTest {
	test := store.BackupDestinationTest{At: time.Now().UTC(), Status: store.BackupTestSuccess, Message: "Repository reachable"}
	w, err := s.backupWhere(ctx, d)
	if err == nil {
		err = s.backup.Test(ctx, w, d.Repo())
	}
	switch {
	case err == nil:
	case notInitialized(err):
		test.Status, test.Message = store.BackupTestNeedsInit, backupMessage(err)
	default:
		test.Status, test.Message = store.BackupTestFailed, backupMessage(err)
	}
	return test
}

func (s *Server) recordBackupTest(ctx context.Context, id int64, test store.BackupDestinationTest) {
	if err := s.store.RecordBackupDestinationTest(context.WithoutCancel(ctx), id, test); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("backup destination test not recorded", "destination", id, "err", err)
	}
}

// notInitialized reports whether err says the repository does not exist
// yet (the runner's "Repository not initialized").
func notInitialized(err error) bool {
	return strings.Contains(strings.ToLower(backupMessage(err)), "not initialized")
}

// backupMessage is what a user is told of a restic failure: the fault's
// message and details (the runner words them), never the logged cause.
func backupMessage(err error) string {
	_, body := errorResponse(err)
	if body.Details != "" {
		return body.Error + ": " + body.Details
	}
	return body.Error
}

// backupInitAnswer is the reference's {success, message}.
type backupInitAnswer struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

func (s *Server) initBackupDestination(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(d.ID), d.Name)
	existed, err := s.initRepository(c.Request.Context(), d)
	if err != nil {
		return err
	}
	msg := "Repository initialized"
	if existed {
		msg = "Repository already initialized"
	}
	return writeJSON(c, http.StatusOK, backupInitAnswer{Success: true, Message: msg})
}

// backupTestAnswer is the outcome of a repository test: {success, status:
// success|needs_init|failed, needsInit, error?}.
type backupTestAnswer struct {
	Success   bool   `json:"success"`
	Status    string `json:"status"`
	NeedsInit bool   `json:"needsInit"`
	Message   string `json:"message,omitempty"`
	Error     string `json:"error,omitempty"`
}

func toBackupTestAnswer(t store.BackupDestinationTest) backupTestAnswer {
	a := backupTestAnswer{Success: t.Status == store.BackupTestSuccess, Status: t.Status, NeedsInit: t.Status == store.BackupTestNeedsInit}
	if a.Success {
		a.Message = t.Message
	} else {
		a.Error = t.Message
	}
	return a
}

func (s *Server) testBackupDestination(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	if s.backup == nil {
		return errBackupsUnavailable
	}
	return writeJSON(c, http.StatusOK, toBackupTestAnswer(s.testRepository(c.Request.Context(), d)))
}

// backupRepositoryTestRequest tests a saved destination (destinationId)
// or settings not saved yet.
type backupRepositoryTestRequest struct {
	DestinationID int64 `json:"destinationId"`
	backupDestinationRequest
}

// testBackupRepository tests a saved destination as saved, or as a form
// edits it (the fields sent with destinationId), or the repository of a
// form not saved yet (nothing is stored but a saved one's test as saved).
func (s *Server) testBackupRepository(c *gin.Context) error {
	var req backupRepositoryTestRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if s.backup == nil {
		return errBackupsUnavailable
	}
	ctx := c.Request.Context()
	if req.DestinationID != 0 {
		d, err := s.backupDestinationByID(ctx, req.DestinationID)
		if err != nil {
			return err
		}
		if req.edits() {
			return s.testEditedDestination(c, d, req.backupDestinationRequest)
		}
		return writeJSON(c, http.StatusOK, toBackupTestAnswer(s.testRepository(ctx, d)))
	}
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		name := "test" // an unsaved form may have no name yet
		req.Name = &name
	}
	var d store.BackupDestination
	if err := s.applyBackupDestination(ctx, &d, req.backupDestinationRequest); err != nil {
		return err
	}
	if err := s.checkLocalRepository(c, d, nil); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toBackupTestAnswer(s.testRepository(ctx, d)))
}

// rotateKeyRequest is the reference's {currentPassword, newPassword}.
type rotateKeyRequest struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// rotateKeyOutOfSync is the 409 of a key rotated in the repository whose
// new password could not be saved.
type rotateKeyOutOfSync struct {
	Success     bool   `json:"success"`
	DBOutOfSync bool   `json:"dbOutOfSync"`
	Error       string `json:"error"`
}

// rotateBackupKey replaces the repository's password: restic adds a key
// for the new password and removes the old one, then the destination keeps
// the new password.
func (s *Server) rotateBackupKey(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	var req rotateKeyRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	switch {
	case req.CurrentPassword == "" || req.NewPassword == "":
		return fault.New(fault.Invalid, "currentPassword and newPassword are required")
	case req.CurrentPassword != d.Password:
		return fault.New(fault.Invalid, "The current password is incorrect")
	case req.NewPassword == req.CurrentPassword:
		return fault.New(fault.Invalid, "The new password is the current one")
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), repositoryTimeout)
	defer cancel()
	if err := s.destinationIdle(ctx, d.ID); err != nil {
		return err
	}
	w, err := s.backupWhere(ctx, d)
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(d.ID), d.Name)
	if err := s.backup.ChangePassword(ctx, w, d.Repo(), req.NewPassword); err != nil {
		return err
	}
	if err := s.store.SetBackupDestinationPassword(context.WithoutCancel(ctx), d.ID, req.NewPassword); err != nil {
		// The repository opens with the new password only: the user, who
		// sent it, must save it by hand (PUT with the new password).
		s.log.Error("backup key rotated but the new password not saved", "destination", d.ID, "err", err)
		return writeJSON(c, http.StatusConflict, rotateKeyOutOfSync{DBOutOfSync: true,
			Error: "The repository's key was rotated but the new password could not be saved: set it with PUT /api/backup/destinations/" +
				fmt.Sprint(d.ID)})
	}
	return writeJSON(c, http.StatusOK, success)
}

// backupTaskRequest is the reference's {task}.
type backupTaskRequest struct {
	Task string `json:"task"`
}

// backupTaskResult is the final event of a maintenance task or a verify:
// {success, task, stats?, output?, error?, cancelled?}. A task stopped
// (DELETE /api/jobs/{jobId}) is cancelled: restic was interrupted and
// released the repository's lock it held.
type backupTaskResult struct {
	Success   bool          `json:"success"`
	Task      string        `json:"task"`
	Stats     *backup.Stats `json:"stats,omitempty"`
	Output    []string      `json:"output"`
	Error     string        `json:"error,omitempty"`
	Cancelled bool          `json:"cancelled,omitempty"`
}

// errTaskStopped is the error of a task stopped before it finished.
const errTaskStopped = "Stopped before it finished"

var backupTasks = map[string]backup.Task{
	"unlock": backup.TaskUnlock, "check": backup.TaskCheck, "prune": backup.TaskPrune, "stats": backup.TaskStats,
	"repair-index": backup.TaskRepairIndex, "repair-snapshots": backup.TaskRepairSnapshots,
}

// backupDestinationTask runs a maintenance task as a job: an event stream
// of progress events and a final result (a failure is a result with
// success false, never a 500), or with Accept: application/json the result.
func (s *Server) backupDestinationTask(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	var req backupTaskRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	task, ok := backupTasks[req.Task]
	if !ok {
		return fault.New(fault.Invalid, "Unknown task: must be one of unlock, check, prune, stats, repair-index, repair-snapshots")
	}
	w, err := s.backupWhere(c.Request.Context(), d)
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(d.ID), d.Name+" "+req.Task)
	return s.streamJob(c, s.backupTaskJob(d, w, task, ""))
}

// dataSubset is restic check's --read-data-subset: a percentage or n/m.
var dataSubset = regexp.MustCompile(`^([0-9]{1,3}(\.[0-9]{1,2})?%|[0-9]{1,4}/[0-9]{1,4})$`)

// backupVerifyRequest is the reference's {dataSubset} ("5%", "1/10"; ""
// reads no data, "100%" all of it).
type backupVerifyRequest struct {
	DataSubset *string `json:"dataSubset"`
}

// verifyBackupDestination checks the repository reading a subset of its
// data (restic check --read-data-subset), as an event stream.
func (s *Server) verifyBackupDestination(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	var req backupVerifyRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	subset := "5%"
	if req.DataSubset != nil {
		subset = strings.TrimSpace(*req.DataSubset)
	}
	if subset != "" && !dataSubset.MatchString(subset) {
		return fault.New(fault.Invalid, `Invalid dataSubset: a percentage ("5%") or a part ("1/10") is expected`)
	}
	w, err := s.backupWhere(c.Request.Context(), d)
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(d.ID), d.Name)
	return s.streamJob(c, s.backupTaskJob(d, w, backup.TaskCheck, subset))
}

// backupTaskJob runs task on d's repository, emitting restic's progress.
func (s *Server) backupTaskJob(d store.BackupDestination, w backup.Where, task backup.Task, readData string) jobs.Func {
	return func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		res := backupTaskResult{Task: string(task), Output: []string{}}
		stats, err := s.backup.Task(ctx, w, d.Repo(), task, readData, func(p backup.Progress) {
			if p.Message != "" && len(res.Output) < 1000 {
				res.Output = append(res.Output, p.Message)
			}
			emit("progress", p)
		})
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			// Stopped by DELETE /api/jobs/{jobId} (or Berth stopping):
			// not a failure of the task.
			res.Error, res.Cancelled = errTaskStopped, true
			return "result", res, false
		}
		if err != nil {
			res.Error = backupMessage(err)
			return "result", res, true
		}
		res.Success = true
		if task == backup.TaskStats {
			res.Stats = &stats
		}
		return "result", res, false
	}
}
