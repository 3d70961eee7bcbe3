package policy

import "context"

// Actor is who asks for a container or a deployment, as far as the
// security settings care.
type Actor struct {
	// Admin callers are never restricted (a user whose isAdmin is set, or
	// anyone while authentication is off).
	Admin bool
}

// System is the actor of work no user asked for right now: scheduled git
// syncs and webhook deploys. It is restricted like a non-administrator.
var System = Actor{}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries, or System.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return System
}
