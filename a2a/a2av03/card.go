package a2av03

import (
	"encoding/json"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
)

// unionCard is an agent card with the fields of both versions. The two
// versions' fields do not collide, so one document serves 1.0 clients (which
// read supportedInterfaces) and 0.3 clients (which read url and
// preferredTransport), each ignoring the other's fields.
type unionCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []a2a.AgentInterface      `json:"supportedInterfaces,omitempty"`
	Provider             *a2a.AgentProvider        `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	Capabilities         capabilities              `json:"capabilities"`
	SecuritySchemes      map[string]unionScheme    `json:"securitySchemes,omitempty"`
	SecurityRequirements []a2a.SecurityRequirement `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []skill                   `json:"skills"`
	Signatures           []a2a.AgentCardSignature  `json:"signatures,omitempty"`
	IconURL              string                    `json:"iconUrl,omitempty"`

	// The 0.3 fields.
	ProtocolVersion                   string                `json:"protocolVersion,omitempty"`
	URL                               string                `json:"url,omitempty"`
	PreferredTransport                string                `json:"preferredTransport,omitempty"`
	AdditionalInterfaces              []agentInterface      `json:"additionalInterfaces,omitempty"`
	Security                          []map[string][]string `json:"security,omitempty"`
	SupportsAuthenticatedExtendedCard bool                  `json:"supportsAuthenticatedExtendedCard,omitempty"`
}

type capabilities struct {
	Streaming         bool                 `json:"streaming,omitempty"`
	PushNotifications bool                 `json:"pushNotifications,omitempty"`
	Extensions        []a2a.AgentExtension `json:"extensions,omitempty"`
	ExtendedAgentCard bool                 `json:"extendedAgentCard,omitempty"`
}

type skill struct {
	a2a.AgentSkill
	Security []map[string][]string `json:"security,omitempty"`
}

type agentInterface struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// unionScheme carries a security scheme in both forms: 0.3's OpenAPI-style
// object with a "type", and 1.0's wrapper member.
type unionScheme struct {
	a2a.SecurityScheme
	Type              string          `json:"type,omitempty"`
	Description       string          `json:"description,omitempty"`
	In                string          `json:"in,omitempty"`
	Name              string          `json:"name,omitempty"`
	Scheme            string          `json:"scheme,omitempty"`
	BearerFormat      string          `json:"bearerFormat,omitempty"`
	Flows             *a2a.OAuthFlows `json:"flows,omitempty"`
	OpenIDConnectURL  string          `json:"openIdConnectUrl,omitempty"`
	OAuth2MetadataURL string          `json:"oauth2MetadataUrl,omitempty"`
}

func fromScheme(s a2a.SecurityScheme) unionScheme {
	u := unionScheme{SecurityScheme: s}
	switch {
	case s.APIKey != nil:
		u.Type, u.Description, u.In, u.Name = "apiKey", s.APIKey.Description, s.APIKey.Location, s.APIKey.Name
	case s.HTTPAuth != nil:
		u.Type, u.Description, u.Scheme, u.BearerFormat = "http", s.HTTPAuth.Description, s.HTTPAuth.Scheme, s.HTTPAuth.BearerFormat
	case s.OAuth2 != nil:
		flows := s.OAuth2.Flows
		u.Type, u.Description, u.Flows, u.OAuth2MetadataURL = "oauth2", s.OAuth2.Description, &flows, s.OAuth2.OAuth2MetadataURL
	case s.OpenIDConnect != nil:
		u.Type, u.Description, u.OpenIDConnectURL = "openIdConnect", s.OpenIDConnect.Description, s.OpenIDConnect.OpenIDConnectURL
	case s.MutualTLS != nil:
		u.Type, u.Description = "mutualTLS", s.MutualTLS.Description
	}
	return u
}

func (u *unionScheme) toScheme() (a2a.SecurityScheme, error) {
	s := u.SecurityScheme
	if s.APIKey != nil || s.HTTPAuth != nil || s.OAuth2 != nil || s.OpenIDConnect != nil || s.MutualTLS != nil {
		return s, nil
	}
	switch u.Type {
	case "apiKey":
		s.APIKey = &a2a.APIKeySecurityScheme{Description: u.Description, Location: u.In, Name: u.Name}
	case "http":
		s.HTTPAuth = &a2a.HTTPAuthSecurityScheme{Description: u.Description, Scheme: u.Scheme, BearerFormat: u.BearerFormat}
	case "oauth2":
		s.OAuth2 = &a2a.OAuth2SecurityScheme{Description: u.Description, OAuth2MetadataURL: u.OAuth2MetadataURL}
		if u.Flows != nil {
			s.OAuth2.Flows = *u.Flows
		}
	case "openIdConnect":
		s.OpenIDConnect = &a2a.OpenIDConnectSecurityScheme{Description: u.Description, OpenIDConnectURL: u.OpenIDConnectURL}
	case "mutualTLS":
		s.MutualTLS = &a2a.MutualTLSSecurityScheme{Description: u.Description}
	default:
		return s, fmt.Errorf("unknown security scheme type %q", u.Type)
	}
	return s, nil
}

func fromRequirements(rs []a2a.SecurityRequirement) []map[string][]string {
	if rs == nil {
		return nil
	}
	out := make([]map[string][]string, len(rs))
	for i, r := range rs {
		out[i] = r.Schemes
	}
	return out
}

func toRequirements(rs []map[string][]string) []a2a.SecurityRequirement {
	if rs == nil {
		return nil
	}
	out := make([]a2a.SecurityRequirement, len(rs))
	for i, r := range rs {
		out[i] = a2a.SecurityRequirement{Schemes: r}
	}
	return out
}

// CardJSON encodes card so that both 1.0 and 0.3 clients can read it: the
// 1.0 fields plus 0.3's url, preferredTransport, protocolVersion,
// additionalInterfaces, security and supportsAuthenticatedExtendedCard, with
// each security scheme in both forms. The 0.3 view's main endpoint is the
// card's first 0.3 interface, or its first interface if none says 0.3; the
// other 0.3 interfaces become additionalInterfaces.
func CardJSON(card *a2a.AgentCard) ([]byte, error) {
	u := unionCard{
		Name: card.Name, Description: card.Description, SupportedInterfaces: card.SupportedInterfaces,
		Provider: card.Provider, Version: card.Version, DocumentationURL: card.DocumentationURL,
		Capabilities:         capabilities(card.Capabilities),
		SecurityRequirements: card.SecurityRequirements,
		DefaultInputModes:    card.DefaultInputModes, DefaultOutputModes: card.DefaultOutputModes,
		Signatures: card.Signatures, IconURL: card.IconURL,
		ProtocolVersion:                   a2a.Version03,
		Security:                          fromRequirements(card.SecurityRequirements),
		SupportsAuthenticatedExtendedCard: card.Capabilities.ExtendedAgentCard,
	}
	if u.DefaultInputModes == nil {
		u.DefaultInputModes = []string{}
	}
	if u.DefaultOutputModes == nil {
		u.DefaultOutputModes = []string{}
	}
	if card.SecuritySchemes != nil {
		u.SecuritySchemes = make(map[string]unionScheme, len(card.SecuritySchemes))
		for name, s := range card.SecuritySchemes {
			u.SecuritySchemes[name] = fromScheme(s)
		}
	}
	u.Skills = make([]skill, len(card.Skills))
	for i, s := range card.Skills {
		u.Skills[i] = skill{AgentSkill: s, Security: fromRequirements(s.SecurityRequirements)}
		if u.Skills[i].Tags == nil {
			u.Skills[i].Tags = []string{}
		}
	}
	main := -1
	for i, iface := range card.SupportedInterfaces {
		if iface.ProtocolVersion == a2a.Version03 {
			main = i
			break
		}
	}
	if main < 0 && len(card.SupportedInterfaces) > 0 {
		main = 0
	}
	if main >= 0 {
		u.URL = card.SupportedInterfaces[main].URL
		u.PreferredTransport = card.SupportedInterfaces[main].ProtocolBinding
		for i, iface := range card.SupportedInterfaces {
			if i != main && iface.ProtocolVersion == a2a.Version03 {
				u.AdditionalInterfaces = append(u.AdditionalInterfaces, agentInterface{URL: iface.URL, Transport: iface.ProtocolBinding})
			}
		}
	}
	return json.Marshal(u)
}

// ParseCard decodes an agent card in the 1.0 form, the 0.3 form or the
// union form CardJSON writes. A card without supportedInterfaces is read as
// 0.3: its url and preferredTransport (JSONRPC if absent), then its
// additionalInterfaces, all at its protocolVersion (0.3 if absent).
func ParseCard(data []byte) (*a2a.AgentCard, error) {
	var u unionCard
	if err := json.Unmarshal(data, &u); err != nil {
		return nil, fmt.Errorf("decode agent card: %w", err)
	}
	card := &a2a.AgentCard{
		Name: u.Name, Description: u.Description, SupportedInterfaces: u.SupportedInterfaces,
		Provider: u.Provider, Version: u.Version, DocumentationURL: u.DocumentationURL,
		Capabilities:         a2a.AgentCapabilities(u.Capabilities),
		SecurityRequirements: u.SecurityRequirements,
		DefaultInputModes:    u.DefaultInputModes, DefaultOutputModes: u.DefaultOutputModes,
		Signatures: u.Signatures, IconURL: u.IconURL,
	}
	if u.SupportsAuthenticatedExtendedCard {
		card.Capabilities.ExtendedAgentCard = true
	}
	if card.SecurityRequirements == nil {
		card.SecurityRequirements = toRequirements(u.Security)
	}
	if u.SecuritySchemes != nil {
		card.SecuritySchemes = make(map[string]a2a.SecurityScheme, len(u.SecuritySchemes))
		for name, s := range u.SecuritySchemes {
			scheme, err := s.toScheme()
			if err != nil {
				return nil, fmt.Errorf("decode agent card: securitySchemes.%s: %w", name, err)
			}
			card.SecuritySchemes[name] = scheme
		}
	}
	card.Skills = make([]a2a.AgentSkill, len(u.Skills))
	for i, s := range u.Skills {
		card.Skills[i] = s.AgentSkill
		if card.Skills[i].SecurityRequirements == nil {
			card.Skills[i].SecurityRequirements = toRequirements(s.Security)
		}
	}
	if len(card.SupportedInterfaces) == 0 && u.URL != "" {
		version := u.ProtocolVersion
		if version == "" {
			version = a2a.Version03
		}
		transport := u.PreferredTransport
		if transport == "" {
			transport = a2a.BindingJSONRPC
		}
		card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{URL: u.URL, ProtocolBinding: transport, ProtocolVersion: version})
		for _, iface := range u.AdditionalInterfaces {
			if iface.URL == u.URL && iface.Transport == transport {
				continue
			}
			card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{URL: iface.URL, ProtocolBinding: iface.Transport, ProtocolVersion: version})
		}
	}
	if len(card.SupportedInterfaces) == 0 {
		return nil, fmt.Errorf("decode agent card: it names no endpoint (neither supportedInterfaces nor url)")
	}
	return card, nil
}
