package a2a

import (
	"encoding/json"
	"fmt"
)

// Protocol versions and bindings named in agent cards and the A2A-Version
// header.
const (
	Version   = "1.0" // the version this package models
	Version03 = "0.3" // the legacy wire still served and spoken

	BindingJSONRPC  = "JSONRPC"
	BindingGRPC     = "GRPC"
	BindingHTTPJSON = "HTTP+JSON"
)

// AgentCard describes an agent: who it is, where and how to reach it, and
// what it can do. It is served at /.well-known/agent-card.json.
type AgentCard struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// SupportedInterfaces lists the endpoints, preferred first.
	SupportedInterfaces  []AgentInterface          `json:"supportedInterfaces"`
	Provider             *AgentProvider            `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	SecurityRequirements []SecurityRequirement     `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
	Signatures           []AgentCardSignature      `json:"signatures,omitempty"`
	IconURL              string                    `json:"iconUrl,omitempty"`
}

// AgentInterface is one endpoint: a URL, the protocol binding spoken there
// and the protocol version.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	Tenant          string `json:"tenant,omitempty"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider is the organization behind an agent.
type AgentProvider struct {
	URL          string `json:"url"`
	Organization string `json:"organization"`
}

// AgentCapabilities declares the optional features an agent supports. A
// server refuses operations that need an undeclared capability.
type AgentCapabilities struct {
	Streaming         bool             `json:"streaming,omitempty"`
	PushNotifications bool             `json:"pushNotifications,omitempty"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
	ExtendedAgentCard bool             `json:"extendedAgentCard,omitempty"`
}

// AgentExtension declares a protocol extension the agent supports.
type AgentExtension struct {
	URI         string `json:"uri"`
	Description string `json:"description,omitempty"`
	// Required extensions must be requested by clients (A2A-Extensions
	// header); requests that do not are refused with
	// CodeExtensionSupportRequired.
	Required bool           `json:"required,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
}

// AgentSkill is something the agent is good at.
type AgentSkill struct {
	ID                   string                `json:"id"`
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	Tags                 []string              `json:"tags"`
	Examples             []string              `json:"examples,omitempty"`
	InputModes           []string              `json:"inputModes,omitempty"`
	OutputModes          []string              `json:"outputModes,omitempty"`
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
}

// AgentCardSignature is a JWS signature over the card.
type AgentCardSignature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// SecurityRequirement maps security scheme names to the scopes required.
// One requirement is satisfied when all its schemes are; a list of
// requirements is satisfied when any one is.
type SecurityRequirement struct {
	Schemes map[string][]string
}

type stringList struct {
	List []string `json:"list"`
}

// MarshalJSON encodes the ProtoJSON form {"schemes": {name: {"list": [...]}}}.
func (r SecurityRequirement) MarshalJSON() ([]byte, error) {
	w := struct {
		Schemes map[string]stringList `json:"schemes"`
	}{Schemes: make(map[string]stringList, len(r.Schemes))}
	for name, scopes := range r.Schemes {
		if scopes == nil {
			scopes = []string{}
		}
		w.Schemes[name] = stringList{List: scopes}
	}
	return json.Marshal(w)
}

// UnmarshalJSON accepts the ProtoJSON form and, for peers that emit it, the
// bare-array form {"schemes": {name: [...]}}.
func (r *SecurityRequirement) UnmarshalJSON(b []byte) error {
	var w struct {
		Schemes map[string]json.RawMessage `json:"schemes"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Schemes = make(map[string][]string, len(w.Schemes))
	for name, raw := range w.Schemes {
		var scopes []string
		if err := json.Unmarshal(raw, &scopes); err != nil {
			var l stringList
			if err2 := json.Unmarshal(raw, &l); err2 != nil {
				return fmt.Errorf("schemes.%s: want {\"list\": [scopes]}", name)
			}
			scopes = l.List
		}
		if scopes == nil {
			scopes = []string{}
		}
		r.Schemes[name] = scopes
	}
	return nil
}

// SecurityScheme is one way to authenticate to the agent: exactly one field
// is set.
type SecurityScheme struct {
	APIKey        *APIKeySecurityScheme        `json:"apiKeySecurityScheme,omitempty"`
	HTTPAuth      *HTTPAuthSecurityScheme      `json:"httpAuthSecurityScheme,omitempty"`
	OAuth2        *OAuth2SecurityScheme        `json:"oauth2SecurityScheme,omitempty"`
	OpenIDConnect *OpenIDConnectSecurityScheme `json:"openIdConnectSecurityScheme,omitempty"`
	MutualTLS     *MutualTLSSecurityScheme     `json:"mtlsSecurityScheme,omitempty"`
}

// APIKeySecurityScheme is an API key sent in a header, query parameter or
// cookie.
type APIKeySecurityScheme struct {
	Description string `json:"description,omitempty"`
	// Location is "header", "query" or "cookie".
	Location string `json:"location"`
	Name     string `json:"name"`
}

// HTTPAuthSecurityScheme is HTTP authentication such as Bearer or Basic.
type HTTPAuthSecurityScheme struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// OAuth2SecurityScheme is OAuth 2.0.
type OAuth2SecurityScheme struct {
	Description       string     `json:"description,omitempty"`
	Flows             OAuthFlows `json:"flows"`
	OAuth2MetadataURL string     `json:"oauth2MetadataUrl,omitempty"`
}

// OAuthFlows holds one OAuth 2.0 flow: exactly one field is set.
type OAuthFlows struct {
	AuthorizationCode *AuthorizationCodeOAuthFlow `json:"authorizationCode,omitempty"`
	ClientCredentials *ClientCredentialsOAuthFlow `json:"clientCredentials,omitempty"`
	// Deprecated: use AuthorizationCode with PKCE.
	Implicit *ImplicitOAuthFlow `json:"implicit,omitempty"`
	// Deprecated: use AuthorizationCode with PKCE or DeviceCode.
	Password   *PasswordOAuthFlow   `json:"password,omitempty"`
	DeviceCode *DeviceCodeOAuthFlow `json:"deviceCode,omitempty"`
}

// AuthorizationCodeOAuthFlow is the OAuth authorization code flow.
type AuthorizationCodeOAuthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl"`
	TokenURL         string            `json:"tokenUrl"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
	PKCERequired     bool              `json:"pkceRequired,omitempty"`
}

// ClientCredentialsOAuthFlow is the OAuth client credentials flow.
type ClientCredentialsOAuthFlow struct {
	TokenURL   string            `json:"tokenUrl"`
	RefreshURL string            `json:"refreshUrl,omitempty"`
	Scopes     map[string]string `json:"scopes"`
}

// ImplicitOAuthFlow is the deprecated OAuth implicit flow.
type ImplicitOAuthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
}

// PasswordOAuthFlow is the deprecated OAuth password flow.
type PasswordOAuthFlow struct {
	TokenURL   string            `json:"tokenUrl"`
	RefreshURL string            `json:"refreshUrl,omitempty"`
	Scopes     map[string]string `json:"scopes"`
}

// DeviceCodeOAuthFlow is the OAuth device code flow (RFC 8628).
type DeviceCodeOAuthFlow struct {
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
	TokenURL               string            `json:"tokenUrl"`
	RefreshURL             string            `json:"refreshUrl,omitempty"`
	Scopes                 map[string]string `json:"scopes"`
}

// OpenIDConnectSecurityScheme is OpenID Connect.
type OpenIDConnectSecurityScheme struct {
	Description      string `json:"description,omitempty"`
	OpenIDConnectURL string `json:"openIdConnectUrl"`
}

// MutualTLSSecurityScheme is mutual TLS.
type MutualTLSSecurityScheme struct {
	Description string `json:"description,omitempty"`
}
