package stacks

// Notifier receives the outcomes of stack operations worth a notification
// (notify.Service).
type Notifier interface {
	Emit(envID int64, eventType, title, message string)
}

// UseNotifier makes deploys, starts, stops and downs report their outcome.
func (s *Service) UseNotifier(n Notifier) { s.notifier = n }

// notifyDeploy reports a deploy (up) of stack name: deployed or failed.
// Nil-safe.
func (s *Service) notifyDeploy(envID int64, name string, err error) {
	if s.notifier == nil {
		return
	}
	if err != nil {
		s.notifier.Emit(envID, "stack_deploy_failed", "Deploy of stack "+name+" failed", err.Error())
		return
	}
	s.notifier.Emit(envID, "stack_deployed", "Stack "+name+" deployed", "Stack "+name+" is up.")
}

// notifyAction reports a successful lifecycle action on stack name: start
// is stack_started, stop and down are stack_stopped; restart and failures
// say nothing (no event is defined for them). Nil-safe.
func (s *Service) notifyAction(envID int64, name string, a Action, err error) {
	if s.notifier == nil || err != nil {
		return
	}
	switch a {
	case Start:
		s.notifier.Emit(envID, "stack_started", "Stack "+name+" started", "Stack "+name+" was started.")
	case Stop:
		s.notifier.Emit(envID, "stack_stopped", "Stack "+name+" stopped", "Stack "+name+" was stopped.")
	case Down:
		s.notifier.Emit(envID, "stack_stopped", "Stack "+name+" stopped", "Stack "+name+" was taken down.")
	}
}
