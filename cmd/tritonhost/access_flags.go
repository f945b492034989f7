package main

import (
	"strings"

	"tritonhost/frontend/protocol"
)

// Who may call what: the restricted APIs.

// restrictedFlag parses the values of a restricted-API flag into rs.
func restrictedFlag(rs *protocol.Restrictions, flag, kind, prefix string, lower bool, values []string) error {
	for _, v := range values {
		if err := rs.Add(flag, kind, prefix, lower, v); err != nil {
			return err
		}
	}
	return nil
}

// categoryList names the restricted-API categories, for --help.
func categoryList() string {
	var names []string
	for _, c := range protocol.Categories() {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}
