package vendingcatalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Key is an S3 key pair. SessionToken is set only for STS session
// credentials (SeaweedFS's own vending); the keys this front mints are
// plain IAM access keys without one.
type Key struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	// Expires is the expiry advertised with the key, zero when none is.
	Expires time.Time
}

// ErrIAM is returned when SeaweedFS's IAM API refuses a request.
var ErrIAM = errors.New("vendingcatalog: SeaweedFS IAM API refused the request")

// iamClient speaks SeaweedFS's embedded IAM API: the AWS IAM query protocol
// (form-encoded POST / with Action=…), SigV4-signed, on the S3 port. Writes
// need `weed … -s3.iam.readOnly=false` and an identity with the Admin action.
type iamClient struct {
	endpoint string // the S3 port's base URL
	region   string
	admin    aws.Credentials
	hc       *http.Client
}

// iamErrorResponse is the body of a refused IAM request.
type iamErrorResponse struct {
	Error struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
}

// do runs one IAM action and decodes its answer into out (nil to discard).
// It returns the IAM error code with ErrIAM when SeaweedFS refuses.
func (c *iamClient) do(ctx context.Context, action string, params url.Values, out any) error {
	form := url.Values{"Action": {action}, "Version": {"2010-05-08"}}
	for k, v := range params {
		form[k] = v
	}
	body := form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("iam %s: %w", action, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if err := sign(ctx, req, []byte(body), c.admin, "iam", c.region); err != nil {
		return fmt.Errorf("iam %s: %w", action, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("iam %s: %w", action, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("iam %s: read the answer: %w", action, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e iamErrorResponse
		_ = xml.Unmarshal(b, &e)
		return fmt.Errorf("%w: %s: %s %s: %s", ErrIAM, action, resp.Status, e.Error.Code, e.Error.Message)
	}
	if out == nil {
		return nil
	}
	if err := xml.Unmarshal(b, out); err != nil {
		return fmt.Errorf("iam %s: decode the answer: %w", action, err)
	}
	return nil
}

// createUser creates a user with one inline policy that lets it list and
// read bucket, nothing else.
func (c *iamClient) createUser(ctx context.Context, user, bucket string) error {
	if err := c.do(ctx, "CreateUser", url.Values{"UserName": {user}}, nil); err != nil {
		return err
	}
	policy, err := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{
			{"Effect": "Allow", "Action": []string{"s3:GetObject"}, "Resource": []string{"arn:aws:s3:::" + bucket + "/*"}},
			{"Effect": "Allow", "Action": []string{"s3:ListBucket"}, "Resource": []string{"arn:aws:s3:::" + bucket}},
		},
	})
	if err != nil {
		return fmt.Errorf("encode the read-only policy: %w", err)
	}
	return c.do(ctx, "PutUserPolicy", url.Values{
		"UserName": {user}, "PolicyName": {readPolicyName}, "PolicyDocument": {string(policy)},
	}, nil)
}

// readPolicyName names the inline policy createUser attaches.
const readPolicyName = "vended-read"

// deleteUser removes a user createUser made, with its policy.
func (c *iamClient) deleteUser(ctx context.Context, user string) error {
	return errors.Join(
		c.do(ctx, "DeleteUserPolicy", url.Values{"UserName": {user}, "PolicyName": {readPolicyName}}, nil),
		c.do(ctx, "DeleteUser", url.Values{"UserName": {user}}, nil),
	)
}

// createAccessKey mints a new access key for user.
func (c *iamClient) createAccessKey(ctx context.Context, user string) (Key, error) {
	var out struct {
		Result struct {
			AccessKey struct {
				AccessKeyID     string `xml:"AccessKeyId"`
				SecretAccessKey string `xml:"SecretAccessKey"`
			} `xml:"AccessKey"`
		} `xml:"CreateAccessKeyResult"`
	}
	if err := c.do(ctx, "CreateAccessKey", url.Values{"UserName": {user}}, &out); err != nil {
		return Key{}, err
	}
	k := Key{AccessKeyID: out.Result.AccessKey.AccessKeyID, SecretAccessKey: out.Result.AccessKey.SecretAccessKey}
	if k.AccessKeyID == "" || k.SecretAccessKey == "" {
		return Key{}, fmt.Errorf("%w: CreateAccessKey answered no key", ErrIAM)
	}
	return k, nil
}

// deleteAccessKey deletes user's access key id.
func (c *iamClient) deleteAccessKey(ctx context.Context, user, id string) error {
	return c.do(ctx, "DeleteAccessKey", url.Values{"UserName": {user}, "AccessKeyId": {id}}, nil)
}

// sign signs req with SigV4 for service in region.
func sign(ctx context.Context, req *http.Request, body []byte, cred aws.Credentials, service, region string) error {
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	return v4.NewSigner().SignHTTP(ctx, cred, req, hash, service, region, time.Now())
}

// Answer is an S3 store's answer to one request.
type Answer struct {
	Status int
	// Code is S3's error code (InvalidAccessKeyId, AccessDenied…) when
	// the store refused.
	Code string
}

// Refused reports whether the store refused the request's credentials
// (403).
func (a Answer) Refused() bool { return a.Status == http.StatusForbidden }

// GetObject asks the S3 store at endpoint for the object at location
// (s3://bucket/key), signed with k in region, and reports how it answered;
// the error is for a request that got no answer.
func GetObject(ctx context.Context, endpoint, region string, k Key, location string) (Answer, error) {
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "s3" && u.Scheme != "s3a" || u.Host == "" {
		return Answer{}, fmt.Errorf("vendingcatalog: %q is not an s3:// location", location)
	}
	return s3Get(ctx, http.DefaultClient, endpoint+"/"+u.Host+u.EscapedPath(), region, k)
}

// listBucket asks the store at endpoint for one key of bucket, signed with
// k: a key with the read-only policy is answered 200, an unknown or deleted
// key 403.
func listBucket(ctx context.Context, hc *http.Client, endpoint, region string, k Key, bucket string) (Answer, error) {
	return s3Get(ctx, hc, endpoint+"/"+url.PathEscape(bucket)+"?list-type=2&max-keys=1", region, k)
}

func s3Get(ctx context.Context, hc *http.Client, rawURL, region string, k Key) (Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return Answer{}, fmt.Errorf("s3 get %s: %w", rawURL, err)
	}
	cred := aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey, SessionToken: k.SessionToken}
	if err := sign(ctx, req, nil, cred, "s3", region); err != nil {
		return Answer{}, fmt.Errorf("s3 get %s: %w", rawURL, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("s3 get %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, fmt.Errorf("s3 get %s: read the answer: %w", rawURL, err)
	}
	a := Answer{Status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		var e struct {
			Code string `xml:"Code"`
		}
		_ = xml.NewDecoder(bytes.NewReader(b)).Decode(&e)
		a.Code = e.Code
	}
	return a, nil
}
