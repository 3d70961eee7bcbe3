package stacks

import (
	"context"

	"github.com/berth-dev/berth/server/internal/store"
)

// Variables returns a stack's variables: the env file's in file order, then
// the secrets with their values masked.
func (s *Service) Variables(ctx context.Context, env store.Environment, name string) ([]Variable, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return nil, err
	}
	text, err := readOptional(s.envPath(st))
	if err != nil {
		return nil, err
	}
	out, err := parseEnv(text)
	if err != nil {
		return nil, err
	}
	secrets, err := s.store.StackSecrets(ctx, st.ID)
	if err != nil {
		return nil, err
	}
	for _, sec := range secrets {
		out = append(out, Variable{Key: sec.Key, Value: Mask, IsSecret: true})
	}
	return out, nil
}

// SetVariables replaces a stack's variables: non-secret ones are written to
// its env file (atomically), secrets to the database. A secret sent back
// with the masked value keeps its stored value.
func (s *Service) SetVariables(ctx context.Context, env store.Environment, name string, vars []Variable) error {
	plain, secrets, err := splitVariables(vars)
	if err != nil {
		return err
	}
	defer s.lock(env.ID, name)()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return err
	}
	old, err := s.store.StackSecrets(ctx, st.ID)
	if err != nil {
		return err
	}
	stored := map[string]string{}
	for _, sec := range old {
		stored[sec.Key] = sec.Value
	}
	for i, sec := range secrets {
		if v, ok := stored[sec.Key]; ok && sec.Value == Mask {
			secrets[i].Value = v
		}
	}
	if err := writeFile(s.envPath(st), renderEnv(plain)); err != nil {
		return err
	}
	return s.store.ReplaceStackSecrets(ctx, st.ID, secrets)
}

// RawEnv returns a stack's env file text as it is on disk.
func (s *Service) RawEnv(ctx context.Context, env store.Environment, name string) (string, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return "", err
	}
	b, err := readOptional(s.envPath(st))
	return string(b), err
}

// SetRawEnv writes a stack's env file text byte for byte (atomically); the
// text must parse as an env file. Secrets are untouched, and lines setting
// a secret's name are dropped so that no secret lands in the file.
func (s *Service) SetRawEnv(ctx context.Context, env store.Environment, name, content string) error {
	if _, err := parseEnv([]byte(content)); err != nil {
		return err
	}
	defer s.lock(env.ID, name)()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return err
	}
	secrets, err := s.store.StackSecrets(ctx, st.ID)
	if err != nil {
		return err
	}
	return writeFile(s.envPath(st), []byte(withoutKeys(content, secretKeys(secrets))))
}
