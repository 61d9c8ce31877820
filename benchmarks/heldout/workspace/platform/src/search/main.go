// Command search-api serves product search over OpenSearch.
package main

import (
	"log"
	"net/http"
	"os"
)

func main() {
	alias := os.Getenv("SEARCH_INDEX_ALIAS")
	if alias == "" {
		alias = "products"
	}
	http.HandleFunc("/search", searchHandler(alias))
	http.HandleFunc("/stock", stockHandler(alias))
	log.Fatal(http.ListenAndServe(":8080", nil))
}
