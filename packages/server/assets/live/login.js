/* global document, location, history, fetch, URLSearchParams */
// The sign-in: the token (from the URL's fragment, which is never sent to the server, or typed) goes once as
// a bearer token to /live/login, which answers with an HttpOnly session cookie; the fragment is dropped from
// the address and the history before anything else happens.
"use strict"
;(function() {
  const message = document.getElementById("message")
  const signIn = async (token) => {
    const answer = await fetch("/live/login", {
      method: "POST",
      headers: { authorization: "Bearer " + token },
      credentials: "same-origin"
    })
    if (answer.status === 204) location.replace("/")
    else message.textContent = "The token was refused (" + answer.status + ")."
  }
  const fragment = new URLSearchParams(location.hash.slice(1))
  const token = fragment.get("token")
  if (location.hash !== "") history.replaceState(null, "", location.pathname)
  if (token) void signIn(token)
  document.getElementById("form").addEventListener("submit", (event) => {
    event.preventDefault()
    const field = document.getElementById("token")
    const typed = field.value.trim()
    field.value = ""
    if (typed !== "") void signIn(typed)
  })
})()
