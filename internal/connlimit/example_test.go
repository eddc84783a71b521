package connlimit_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/druidiceberg/sidecar/internal/connlimit"
)

// A server behind the cap: the listener needs the server's connection
// states to tell idle connections from busy ones.
func Example() {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	ln := connlimit.New(tcp, 15_000, connlimit.Hooks{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := &http.Server{Handler: h, ConnState: ln.ConnState}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown(context.Background()) }()

	resp, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 ok
}
