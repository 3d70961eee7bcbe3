package stacks

import (
	"context"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Variables returns a stack's variables: the env file's in file order, then
// the secrets with their values masked.
func (s *Service) Variables(ctx context.Context, env store.Environment, name string) ([]Variable, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return nil, err
	}
	files, err := s.files(ctx, st)
	if err != nil {
		return nil, err
	}
	text, err := readOptional(files.env)
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

// SetVariables sets the variables of a stack that has none yet (a git stack
// just recorded): non-secret ones are written to its env file (atomically),
// secrets to the database. It rewrites the env file, so it is not the
// handler of PUT /env: see SetSecrets.
func (s *Service) SetVariables(ctx context.Context, env store.Environment, name string, vars []Variable) error {
	plain, secrets, err := splitVariables(vars)
	if err != nil {
		return err
	}
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return err
	}
	old, err := s.store.StackSecrets(ctx, st.ID)
	if err != nil {
		return err
	}
	keepMasked(secrets, old)
	files, err := s.files(ctx, st)
	if err != nil {
		return err
	}
	if err := writeFile(files.env, renderEnv(plain)); err != nil {
		return err
	}
	return s.store.ReplaceStackSecrets(ctx, st.ID, secrets)
}

// SetSecrets is PUT /api/stacks/{name}/env (COMPAT): vars is the full set of
// the stack's secret variables, and it returns how many secrets the stack
// has now.
//   - Only the entries with isSecret are stored; the others are ignored
//     (written nowhere): the env file's content belongs to SetRawEnv, and
//     this never touches the file, so its comments and layout survive.
//   - A stored secret absent from vars is removed (vars is the full set).
//   - A secret whose value is the mask keeps its stored value (a new key
//     sent with the mask is stored as given).
//   - Every key, secret or not, must match keyPattern (400 naming the key);
//     a secret key given twice is refused.
//
// Secrets are never written to the env file; deploys inject them (source).
func (s *Service) SetSecrets(ctx context.Context, env store.Environment, name string, vars []Variable) (int, error) {
	var secrets []store.StackSecret
	seen := map[string]bool{}
	for _, v := range vars {
		if err := checkKey(v.Key); err != nil {
			return 0, err
		}
		if !v.IsSecret {
			continue
		}
		if seen[v.Key] {
			return 0, fault.Invalidf("Variable %q is given twice", v.Key)
		}
		seen[v.Key] = true
		secrets = append(secrets, store.StackSecret{Key: v.Key, Value: v.Value})
	}
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return 0, err
	}
	defer unlock()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return 0, err
	}
	old, err := s.store.StackSecrets(ctx, st.ID)
	if err != nil {
		return 0, err
	}
	keepMasked(secrets, old)
	if err := s.store.ReplaceStackSecrets(ctx, st.ID, secrets); err != nil {
		return 0, err
	}
	return len(secrets), nil
}

// keepMasked gives each secret sent back with the mask its stored value.
func keepMasked(secrets, stored []store.StackSecret) {
	values := map[string]string{}
	for _, sec := range stored {
		values[sec.Key] = sec.Value
	}
	for i, sec := range secrets {
		if v, ok := values[sec.Key]; ok && isMask(sec.Value) {
			secrets[i].Value = v
		}
	}
}

// RawEnv returns a stack's env file text as it is on disk.
func (s *Service) RawEnv(ctx context.Context, env store.Environment, name string) (string, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return "", err
	}
	files, err := s.files(ctx, st)
	if err != nil {
		return "", err
	}
	b, err := readOptional(files.env)
	return string(b), err
}

// SetRawEnv writes a stack's env file text byte for byte (atomically); the
// text must parse as an env file. Secrets are untouched, and lines setting
// a secret's name are dropped so that no secret lands in the file.
func (s *Service) SetRawEnv(ctx context.Context, env store.Environment, name, content string) error {
	if _, err := parseEnv([]byte(content)); err != nil {
		return err
	}
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return err
	}
	secrets, err := s.store.StackSecrets(ctx, st.ID)
	if err != nil {
		return err
	}
	files, err := s.files(ctx, st)
	if err != nil {
		return err
	}
	return writeFile(files.env, []byte(withoutKeys(content, secretKeys(secrets))))
}
