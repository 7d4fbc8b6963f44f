package bedrocktest

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// maxSkew is how far a request's X-Amz-Date may be from the server's
// clock, as AWS allows.
const maxSkew = 15 * time.Minute

// VerifySigV4 checks a request's SigV4 signature as AWS does: it parses
// the Authorization header, rebuilds the request from the headers it
// says were signed, signs that again with the AWS SDK's signer, secret
// and the request's own date, and compares. It also checks the
// credential's access key ID, service and Region, the date's skew, and
// that the body's hash is the one signed. body is the request's body
// (already read). It returns nil for a valid signature.
func VerifySigV4(r *http.Request, body []byte, accessKeyID, secretKey, service, region string, now time.Time) error {
	auth := r.Header.Get("Authorization")
	const algo = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, algo) {
		return errors.New("missing or non-SigV4 Authorization header")
	}
	fields := map[string]string{}
	for f := range strings.SplitSeq(strings.TrimPrefix(auth, algo), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return fmt.Errorf("malformed Authorization field %q", f)
		}
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return errors.New("malformed credential scope")
	}
	if scope[0] != accessKeyID {
		return fmt.Errorf("unknown access key ID %q", scope[0])
	}
	if scope[2] != region || scope[3] != service {
		return fmt.Errorf("credential scope is for %s/%s, want %s/%s", scope[2], scope[3], region, service)
	}
	date, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return errors.New("missing or malformed X-Amz-Date")
	}
	if d := now.Sub(date); d > maxSkew || d < -maxSkew {
		return fmt.Errorf("signature date %s is too far from the server's clock", date.Format(time.RFC3339))
	}
	if scope[1] != date.Format("20060102") {
		return errors.New("credential scope date differs from X-Amz-Date")
	}

	// The request as the client signed it: the signed headers only.
	signed := strings.Split(fields["SignedHeaders"], ";")
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	again, err := http.NewRequest(r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	again.Host = r.Host
	again.ContentLength = int64(len(body))
	again.Header = http.Header{}
	for _, h := range signed {
		switch h {
		case "host", "content-length":
			continue // from Host and ContentLength
		}
		vs := r.Header.Values(h)
		if len(vs) == 0 {
			return fmt.Errorf("signed header %q is missing", h)
		}
		again.Header[http.CanonicalHeaderKey(h)] = vs
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretKey, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, again, hex.EncodeToString(sum[:]), service, region, date); err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(again.Header.Get("Authorization")), []byte(auth)) != 1 {
		return errors.New("the request signature we calculated does not match the signature you provided")
	}
	return nil
}
