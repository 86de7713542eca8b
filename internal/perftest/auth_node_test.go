package perftest

import (
	"encoding/base64"
	"testing"

	"github.com/perfclones/perfclones/internal/testenv"
)

// authResource is the private node's OAuth2 resource server id, the
// prefix of the scopes its tokens carry; authKey the HS256 key it trusts.
const (
	authResource = "perfclones"
	authKeyID    = "perfclones-key"
	authKey      = "perfclones-oauth2-signing-key"
	// authCertUser is the common name of the harness's client certificate,
	// a passwordless user of the node (SASL EXTERNAL logs in as it).
	authCertUser = "perfclones-client"
)

// startAuthNode boots a private node that takes client certificates
// (SASL EXTERNAL over its TLS listener, which requires one) and OAuth2
// tokens signed with authKey, beside the guest user.
func startAuthNode(t *testing.T, certs testenv.TLSFiles) *testenv.PrivateRabbitMQ {
	t.Helper()
	return testenv.StartPrivateRabbitMQWith(t, testenv.PrivateRabbitMQConfig{
		Plugins: []string{"rabbitmq_auth_mechanism_ssl", "rabbitmq_auth_backend_oauth2"},
		TLS:     &testenv.PrivateRabbitMQTLS{CA: certs.CA, Cert: certs.ServerIPCert, Key: certs.ServerIPKey, RequireClientCert: true},
		Conf: `auth_mechanisms.1 = PLAIN
auth_mechanisms.2 = AMQPLAIN
auth_mechanisms.3 = EXTERNAL
ssl_cert_login_from = common_name
auth_backends.1 = internal
auth_backends.2 = rabbit_auth_backend_oauth2
`,
		Advanced: `[{rabbitmq_auth_backend_oauth2, [
  {resource_server_id, <<"` + authResource + `">>},
  {key_config, [{default_key, <<"` + authKeyID + `">>},
    {signing_keys, #{<<"` + authKeyID + `">> => {map, #{<<"kty">> => <<"oct">>, <<"alg">> => <<"HS256">>, <<"k">> => <<"` + base64.RawURLEncoding.EncodeToString([]byte(authKey)) + `">>}}}}]}
]}].
`,
		Definitions: `{"users": [
  {"name": "guest", "password": "guest", "tags": "administrator"},
  {"name": "` + authCertUser + `", "password_hash": "", "tags": ""}],
 "vhosts": [{"name": "/"}],
 "permissions": [
  {"user": "guest", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"},
  {"user": "` + authCertUser + `", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}]}
`,
	})
}
