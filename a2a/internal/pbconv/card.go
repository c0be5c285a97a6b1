package pbconv

import (
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// Agent card conversions. The proto marks documentation_url, icon_url and
// the capability flags optional; the model has no "unset" for them, so an
// empty string or false is left unset on the wire.

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optBool(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

func CardToPB(c *a2a.AgentCard) (*a2apb.AgentCard, error) {
	out := &a2apb.AgentCard{
		Name: c.Name, Description: c.Description, Version: c.Version,
		DocumentationUrl: optString(c.DocumentationURL), IconUrl: optString(c.IconURL),
		DefaultInputModes: c.DefaultInputModes, DefaultOutputModes: c.DefaultOutputModes,
		SecurityRequirements: requirementsToPB(c.SecurityRequirements),
	}
	for _, i := range c.SupportedInterfaces {
		out.SupportedInterfaces = append(out.SupportedInterfaces, &a2apb.AgentInterface{
			Url: i.URL, ProtocolBinding: i.ProtocolBinding, Tenant: i.Tenant, ProtocolVersion: i.ProtocolVersion,
		})
	}
	if p := c.Provider; p != nil {
		out.Provider = &a2apb.AgentProvider{Url: p.URL, Organization: p.Organization}
	}
	caps := &a2apb.AgentCapabilities{
		Streaming:         optBool(c.Capabilities.Streaming),
		PushNotifications: optBool(c.Capabilities.PushNotifications),
		ExtendedAgentCard: optBool(c.Capabilities.ExtendedAgentCard),
	}
	for i, e := range c.Capabilities.Extensions {
		params, err := StructToPB(e.Params)
		if err != nil {
			return nil, fmt.Errorf("capabilities.extensions[%d].params: %w", i, err)
		}
		caps.Extensions = append(caps.Extensions, &a2apb.AgentExtension{
			Uri: e.URI, Description: e.Description, Required_: e.Required, Params: params,
		})
	}
	out.Capabilities = caps
	if c.SecuritySchemes != nil {
		out.SecuritySchemes = make(map[string]*a2apb.SecurityScheme, len(c.SecuritySchemes))
		for name, s := range c.SecuritySchemes {
			out.SecuritySchemes[name] = schemeToPB(&s)
		}
	}
	for _, s := range c.Skills {
		out.Skills = append(out.Skills, &a2apb.AgentSkill{
			Id: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples,
			InputModes: s.InputModes, OutputModes: s.OutputModes,
			SecurityRequirements: requirementsToPB(s.SecurityRequirements),
		})
	}
	for i, s := range c.Signatures {
		h, err := StructToPB(s.Header)
		if err != nil {
			return nil, fmt.Errorf("signatures[%d].header: %w", i, err)
		}
		out.Signatures = append(out.Signatures, &a2apb.AgentCardSignature{Protected: s.Protected, Signature: s.Signature, Header: h})
	}
	return out, nil
}

func CardFromPB(c *a2apb.AgentCard) *a2a.AgentCard {
	out := &a2a.AgentCard{
		Name: c.Name, Description: c.Description, Version: c.Version,
		DocumentationURL: c.GetDocumentationUrl(), IconURL: c.GetIconUrl(),
		DefaultInputModes: c.DefaultInputModes, DefaultOutputModes: c.DefaultOutputModes,
		SecurityRequirements: requirementsFromPB(c.SecurityRequirements),
	}
	for _, i := range c.SupportedInterfaces {
		out.SupportedInterfaces = append(out.SupportedInterfaces, a2a.AgentInterface{
			URL: i.Url, ProtocolBinding: i.ProtocolBinding, Tenant: i.Tenant, ProtocolVersion: i.ProtocolVersion,
		})
	}
	if p := c.Provider; p != nil {
		out.Provider = &a2a.AgentProvider{URL: p.Url, Organization: p.Organization}
	}
	if caps := c.Capabilities; caps != nil {
		out.Capabilities = a2a.AgentCapabilities{
			Streaming: caps.GetStreaming(), PushNotifications: caps.GetPushNotifications(),
			ExtendedAgentCard: caps.GetExtendedAgentCard(),
		}
		for _, e := range caps.Extensions {
			out.Capabilities.Extensions = append(out.Capabilities.Extensions, a2a.AgentExtension{
				URI: e.Uri, Description: e.Description, Required: e.Required_, Params: StructFromPB(e.Params),
			})
		}
	}
	if c.SecuritySchemes != nil {
		out.SecuritySchemes = make(map[string]a2a.SecurityScheme, len(c.SecuritySchemes))
		for name, s := range c.SecuritySchemes {
			out.SecuritySchemes[name] = schemeFromPB(s)
		}
	}
	for _, s := range c.Skills {
		out.Skills = append(out.Skills, a2a.AgentSkill{
			ID: s.Id, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples,
			InputModes: s.InputModes, OutputModes: s.OutputModes,
			SecurityRequirements: requirementsFromPB(s.SecurityRequirements),
		})
	}
	for _, s := range c.Signatures {
		out.Signatures = append(out.Signatures, a2a.AgentCardSignature{Protected: s.Protected, Signature: s.Signature, Header: StructFromPB(s.Header)})
	}
	return out
}

func requirementsToPB(rs []a2a.SecurityRequirement) []*a2apb.SecurityRequirement {
	if rs == nil {
		return nil
	}
	out := make([]*a2apb.SecurityRequirement, len(rs))
	for i, r := range rs {
		m := make(map[string]*a2apb.StringList, len(r.Schemes))
		for name, scopes := range r.Schemes {
			m[name] = &a2apb.StringList{List: scopes}
		}
		out[i] = &a2apb.SecurityRequirement{Schemes: m}
	}
	return out
}

// requirementsFromPB gives every scheme a non-nil scope list, as the JSON
// decoder does.
func requirementsFromPB(rs []*a2apb.SecurityRequirement) []a2a.SecurityRequirement {
	if rs == nil {
		return nil
	}
	out := make([]a2a.SecurityRequirement, len(rs))
	for i, r := range rs {
		m := make(map[string][]string, len(r.GetSchemes()))
		for name, l := range r.GetSchemes() {
			scopes := l.GetList()
			if scopes == nil {
				scopes = []string{}
			}
			m[name] = scopes
		}
		out[i] = a2a.SecurityRequirement{Schemes: m}
	}
	return out
}

func schemeToPB(s *a2a.SecurityScheme) *a2apb.SecurityScheme {
	out := new(a2apb.SecurityScheme)
	switch {
	case s.APIKey != nil:
		out.Scheme = &a2apb.SecurityScheme_ApiKeySecurityScheme{ApiKeySecurityScheme: &a2apb.APIKeySecurityScheme{
			Description: s.APIKey.Description, Location: s.APIKey.Location, Name: s.APIKey.Name}}
	case s.HTTPAuth != nil:
		out.Scheme = &a2apb.SecurityScheme_HttpAuthSecurityScheme{HttpAuthSecurityScheme: &a2apb.HTTPAuthSecurityScheme{
			Description: s.HTTPAuth.Description, Scheme: s.HTTPAuth.Scheme, BearerFormat: s.HTTPAuth.BearerFormat}}
	case s.OAuth2 != nil:
		out.Scheme = &a2apb.SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &a2apb.OAuth2SecurityScheme{
			Description: s.OAuth2.Description, Flows: flowsToPB(&s.OAuth2.Flows), Oauth2MetadataUrl: s.OAuth2.OAuth2MetadataURL}}
	case s.OpenIDConnect != nil:
		out.Scheme = &a2apb.SecurityScheme_OpenIdConnectSecurityScheme{OpenIdConnectSecurityScheme: &a2apb.OpenIdConnectSecurityScheme{
			Description: s.OpenIDConnect.Description, OpenIdConnectUrl: s.OpenIDConnect.OpenIDConnectURL}}
	case s.MutualTLS != nil:
		out.Scheme = &a2apb.SecurityScheme_MtlsSecurityScheme{MtlsSecurityScheme: &a2apb.MutualTlsSecurityScheme{
			Description: s.MutualTLS.Description}}
	}
	return out
}

func schemeFromPB(s *a2apb.SecurityScheme) a2a.SecurityScheme {
	var out a2a.SecurityScheme
	switch v := s.GetScheme().(type) {
	case *a2apb.SecurityScheme_ApiKeySecurityScheme:
		k := v.ApiKeySecurityScheme
		out.APIKey = &a2a.APIKeySecurityScheme{Description: k.GetDescription(), Location: k.GetLocation(), Name: k.GetName()}
	case *a2apb.SecurityScheme_HttpAuthSecurityScheme:
		h := v.HttpAuthSecurityScheme
		out.HTTPAuth = &a2a.HTTPAuthSecurityScheme{Description: h.GetDescription(), Scheme: h.GetScheme(), BearerFormat: h.GetBearerFormat()}
	case *a2apb.SecurityScheme_Oauth2SecurityScheme:
		o := v.Oauth2SecurityScheme
		out.OAuth2 = &a2a.OAuth2SecurityScheme{Description: o.GetDescription(), Flows: flowsFromPB(o.GetFlows()), OAuth2MetadataURL: o.GetOauth2MetadataUrl()}
	case *a2apb.SecurityScheme_OpenIdConnectSecurityScheme:
		o := v.OpenIdConnectSecurityScheme
		out.OpenIDConnect = &a2a.OpenIDConnectSecurityScheme{Description: o.GetDescription(), OpenIDConnectURL: o.GetOpenIdConnectUrl()}
	case *a2apb.SecurityScheme_MtlsSecurityScheme:
		out.MutualTLS = &a2a.MutualTLSSecurityScheme{Description: v.MtlsSecurityScheme.GetDescription()}
	}
	return out
}

func flowsToPB(f *a2a.OAuthFlows) *a2apb.OAuthFlows {
	out := new(a2apb.OAuthFlows)
	switch {
	case f.AuthorizationCode != nil:
		a := f.AuthorizationCode
		out.Flow = &a2apb.OAuthFlows_AuthorizationCode{AuthorizationCode: &a2apb.AuthorizationCodeOAuthFlow{
			AuthorizationUrl: a.AuthorizationURL, TokenUrl: a.TokenURL, RefreshUrl: a.RefreshURL, Scopes: a.Scopes, PkceRequired: a.PKCERequired}}
	case f.ClientCredentials != nil:
		c := f.ClientCredentials
		out.Flow = &a2apb.OAuthFlows_ClientCredentials{ClientCredentials: &a2apb.ClientCredentialsOAuthFlow{
			TokenUrl: c.TokenURL, RefreshUrl: c.RefreshURL, Scopes: c.Scopes}}
	case f.Implicit != nil:
		i := f.Implicit
		out.Flow = &a2apb.OAuthFlows_Implicit{Implicit: &a2apb.ImplicitOAuthFlow{
			AuthorizationUrl: i.AuthorizationURL, RefreshUrl: i.RefreshURL, Scopes: i.Scopes}}
	case f.Password != nil:
		p := f.Password
		out.Flow = &a2apb.OAuthFlows_Password{Password: &a2apb.PasswordOAuthFlow{
			TokenUrl: p.TokenURL, RefreshUrl: p.RefreshURL, Scopes: p.Scopes}}
	case f.DeviceCode != nil:
		d := f.DeviceCode
		out.Flow = &a2apb.OAuthFlows_DeviceCode{DeviceCode: &a2apb.DeviceCodeOAuthFlow{
			DeviceAuthorizationUrl: d.DeviceAuthorizationURL, TokenUrl: d.TokenURL, RefreshUrl: d.RefreshURL, Scopes: d.Scopes}}
	}
	return out
}

func flowsFromPB(f *a2apb.OAuthFlows) a2a.OAuthFlows {
	var out a2a.OAuthFlows
	switch v := f.GetFlow().(type) {
	case *a2apb.OAuthFlows_AuthorizationCode:
		a := v.AuthorizationCode
		out.AuthorizationCode = &a2a.AuthorizationCodeOAuthFlow{
			AuthorizationURL: a.GetAuthorizationUrl(), TokenURL: a.GetTokenUrl(), RefreshURL: a.GetRefreshUrl(), Scopes: a.GetScopes(), PKCERequired: a.GetPkceRequired()}
	case *a2apb.OAuthFlows_ClientCredentials:
		c := v.ClientCredentials
		out.ClientCredentials = &a2a.ClientCredentialsOAuthFlow{TokenURL: c.GetTokenUrl(), RefreshURL: c.GetRefreshUrl(), Scopes: c.GetScopes()}
	case *a2apb.OAuthFlows_Implicit:
		i := v.Implicit
		out.Implicit = &a2a.ImplicitOAuthFlow{AuthorizationURL: i.GetAuthorizationUrl(), RefreshURL: i.GetRefreshUrl(), Scopes: i.GetScopes()}
	case *a2apb.OAuthFlows_Password:
		p := v.Password
		out.Password = &a2a.PasswordOAuthFlow{TokenURL: p.GetTokenUrl(), RefreshURL: p.GetRefreshUrl(), Scopes: p.GetScopes()}
	case *a2apb.OAuthFlows_DeviceCode:
		d := v.DeviceCode
		out.DeviceCode = &a2a.DeviceCodeOAuthFlow{
			DeviceAuthorizationURL: d.GetDeviceAuthorizationUrl(), TokenURL: d.GetTokenUrl(), RefreshURL: d.GetRefreshUrl(), Scopes: d.GetScopes()}
	}
	return out
}
