package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/postgres"
)

// Open a Store from a DSN. Several instances of an application can open the
// same database: they share sessions, state and checkpoints.
func Example() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), postgres.WithSchema("runlet"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// A runtime keeps sessions, state and checkpoints in the database:
	//	rt := runlet.NewRuntime(runlet.WithStore(store))

	turn := []runlet.Message{runlet.UserText("Hello"), runlet.AssistantText("Hi! How can I help?")}
	err = store.AppendSession(ctx, "user-42", 0, turn)
	if errors.Is(err, runlet.ErrConflict) {
		// Another instance appended first: reload the session and retry.
		fmt.Println("conflict")
	}
}

// Use a pool the application already has; Close leaves it open.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := postgres.New(ctx, pool)
	if err != nil {
		log.Fatal(err)
	}
	if err := store.SetState(ctx, "user-42", "locale", []byte("fr-FR")); err != nil {
		log.Fatal(err)
	}
}
