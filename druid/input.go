package druid

// HTTPInputSource is Druid's http inputSource (HttpInputSource, in
// processing/src/main/java/org/apache/druid/data/input/impl/
// HttpInputSource.java): the URIs a task reads, one split each, and the
// credentials it sends with them. It is what the answer of /splits hands
// out, and what every generated task and statement reads.
type HTTPInputSource struct {
	// Type is "http".
	Type string   `json:"type"`
	URIs []string `json:"uris"`
	// Username and Password are Druid's httpAuthenticationUsername and
	// httpAuthenticationPassword; the password is a provider that names an
	// environment variable, never the secret.
	Username string            `json:"httpAuthenticationUsername,omitempty"`
	Password *PasswordProvider `json:"httpAuthenticationPassword,omitempty"`
}

// PasswordProvider is Druid's environment variable password provider
// (EnvironmentVariablePasswordProvider): Druid reads the password from the
// variable named.
type PasswordProvider struct {
	// Type is "environment".
	Type     string `json:"type"`
	Variable string `json:"variable"`
}

// InputFormat is the Druid inputFormat that reads what the URIs serve:
// parquet for raw data files, json for the sidecar's rows.
type InputFormat struct {
	Type string `json:"type"`
	// BinaryAsString is Druid's Parquet option; on the row path the
	// sidecar itself writes binaries as text.
	BinaryAsString bool `json:"binaryAsString,omitempty"`
	// FlattenSpec reads a field under another name as well: a statement
	// reads a time column named __time so (Source.externTime).
	FlattenSpec *FlattenSpec `json:"flattenSpec,omitempty"`
}

// FlattenSpec is Druid's JSONPathSpec: with UseFieldDiscovery every
// root field keeps its name, and each of Fields adds a column.
type FlattenSpec struct {
	UseFieldDiscovery bool           `json:"useFieldDiscovery"`
	Fields            []FlattenField `json:"fields"`
}

// FlattenField is one column of a FlattenSpec: the value at the JSONPath
// Expr ("path") under Name.
type FlattenField struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// inlineInputSource is Druid's inline inputSource, the stand-in of
// Source.EmptySource: rows held in the spec itself.
type inlineInputSource struct {
	Data string `json:"data"`
	Type string `json:"type"`
}
