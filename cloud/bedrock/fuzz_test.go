package bedrock_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
)

// offlineModel is an adapter that never connects: for the decoder alone.
func offlineModel(t testing.TB, limit int64) *bedrock.Model {
	m, err := bedrock.New(context.Background(), bedrock.Config{Region: "us-east-1", Model: testModel, MaxResponseBytes: limit,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// FuzzDecodeStream feeds arbitrary bytes to the ConverseStream decoder
// (seeds: the recorded streams and testdata/fuzz). It never panics or
// hangs; it returns a response or a *runlet.ProviderError; and its frame
// reader, which checks each prelude before the AWS SDK's decoder reads
// the message, yields exactly the messages the SDK's decoder alone does
// for streams within the limit.
func FuzzDecodeStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "recorded", "*.eventstream"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	const limit = 1 << 16
	m := offlineModel(f, limit)
	f.Fuzz(func(t *testing.T, body []byte) {
		var resp *runlet.ModelResponse
		var err error
		done := make(chan struct{})
		go func() { resp, err = bedrock.DecodeStream(m, body); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second): // a hang guard
			t.Fatal("HANG in DecodeStream")
		}
		var perr *runlet.ProviderError
		switch {
		case err == nil && resp == nil:
			t.Fatal("no response and no error")
		case err != nil && !errors.As(err, &perr):
			t.Fatalf("error %T %v, want a *runlet.ProviderError", err, err)
		}

		ours := bedrock.NewFrameReader(bytes.NewReader(body), limit)
		sdk := eventstream.NewDecoder()
		rest := bytes.NewReader(body)
		for range 64 {
			typ, payload, err := ours.Next()
			if err != nil {
				return // ours refuses (or ends): nothing to compare past it
			}
			want, werr := sdk.Decode(rest, nil)
			if werr != nil {
				t.Fatalf("ours decoded a message the SDK refuses: %v", werr)
			}
			if v := want.Headers.Get(":event-type"); (v == nil && typ != "") || (v != nil && v.String() != typ) || !bytes.Equal(want.Payload, payload) {
				t.Fatalf("ours %q %q, SDK %v %q", typ, payload, v, want.Payload)
			}
		}
	})
}

// A message whose prelude announces 4 GiB is refused before it is read:
// the SDK's decoder alone would allocate whatever the prelude says.
func TestHugeMessageRefusedBeforeRead(t *testing.T) {
	huge := []byte{0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0}
	body := io.MultiReader(bytes.NewReader(huge), &endless{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := bedrock.NewFrameReader(body, 1<<20)
	_, _, err := f.Next()
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a 4 GiB message was accepted")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("refusing it allocated %d bytes", grew)
	}
	_, err = bedrock.DecodeStream(offlineModel(t, 1<<20), huge)
	if !errors.Is(err, runlet.ErrResponseTooLarge) {
		t.Errorf("decoder: %v, want ErrResponseTooLarge", err)
	}
}

// endless is a reader that never ends: a server streaming one message
// forever.
type endless struct{}

func (*endless) Read(p []byte) (int, error) { return len(p), nil }

// A message of thousands of tiny headers is refused as malformed: the
// SDK's decoder would add each with a scan of those before it, quadratic
// time for one message.
func TestManyHeadersRefused(t *testing.T) {
	var headers []byte
	for range 30000 {
		headers = append(headers, 0, 0) // an empty name, value true
	}
	msg := frame(headers, []byte(`{}`))
	_, err := bedrock.DecodeStream(offlineModel(t, 1<<20), msg)
	if !errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("error %v, want ErrMalformedStream", err)
	}
}

// frame builds an event-stream message by hand, CRCs included, for
// inputs the SDK's encoder would not make.
func frame(headers, payload []byte) []byte {
	total := 16 + len(headers) + len(payload)
	b := binary.BigEndian.AppendUint32(nil, uint32(total))
	b = binary.BigEndian.AppendUint32(b, uint32(len(headers)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(append(b, headers...), payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// A message with a bad CRC, or a header of an unknown type, is a final
// ErrMalformedStream, not a cut-off stream to retry.
func TestCorruptFrameIsMalformed(t *testing.T) {
	good := frame([]byte{0}, []byte(`{}`)) // an empty header name, then a missing type
	bad := bytes.Clone(frame(nil, []byte(`{"role":"assistant"}`)))
	bad[len(bad)-1] ^= 0xff
	unknownType := frame([]byte{1, 'x', 99}, nil)
	for name, body := range map[string][]byte{"bad CRC": bad, "unknown header type": unknownType, "short header": good} {
		_, err := bedrock.DecodeStream(offlineModel(t, 1<<20), body)
		var perr *runlet.ProviderError
		if !errors.Is(err, runlet.ErrMalformedStream) || !errors.As(err, &perr) || perr.Retryable {
			t.Errorf("%s: %v, want a final ErrMalformedStream", name, err)
		}
	}
}
