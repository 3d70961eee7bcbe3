package api

import "encoding/json"

// secretMask stands for a stored secret (client secret, bind password) in
// responses; sent back in an update, it keeps the stored value.
const secretMask = "********"

// secretField is a secret in a request body (a password, token, key or
// client secret sealed at rest). Every record with such a secret follows
// one rule, applied here and nowhere else:
//   - absent, or JSON null: keep the stored secret (clients never read
//     secrets back, so an edit form that leaves them alone omits them);
//   - the mask some GETs answer with (secretMask): keep it too;
//   - "": clear it;
//   - any other string: replace it.
//
// On creation "keep" means no secret.
type secretField struct {
	present bool // a string was sent (not absent, not null)
	value   string
}

// UnmarshalJSON takes a string, or null (the same as absent).
func (f *secretField) UnmarshalJSON(b []byte) error {
	var v *string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = secretField{}
	if v != nil {
		*f = secretField{present: true, value: *v}
	}
	return nil
}

// change is the new value of the secret, or nil to keep the stored one
// (the form the domain updates take).
func (f secretField) change() *string {
	if !f.present || f.value == secretMask {
		return nil
	}
	v := f.value
	return &v
}

// applyTo sets *dst by the rule.
func (f secretField) applyTo(dst *string) {
	if v := f.change(); v != nil {
		*dst = *v
	}
}
