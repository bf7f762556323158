/* global document, location, localStorage, WebSocket, fetch, setTimeout, setInterval, performance, atob, window, Terminal, FitAddon, Document, Element */
// The live view's page: the list of every terminal (live, over /live/events), one terminal as it is shown
// (/live/terminal/<id>: a snapshot, then the pty's bytes), the control bar (take control, hand back), the
// agents' requests for a person, the audit, and the recordings with a player. Plain JS over xterm.js.
"use strict"
;(function() {
  // The page runs under its own policy (style-src 'self' 'nonce-…', the nonce new for each load of the page).
  // xterm.js makes <style> elements (its theme's colours, its sizes): each gets the page's nonce as it is
  // made, before it is inserted. It sets a cell's own colours (24-bit colour, dim) with setAttribute("style"),
  // which no nonce can allow: those go through the element's style object (CSSOM), which the policy allows.
  const styleNonce = document.currentScript ? document.currentScript.nonce : ""
  const createElement = Document.prototype.createElement
  Document.prototype.createElement = function(tag, options) {
    const element = createElement.call(this, tag, options)
    if (styleNonce && String(tag).toLowerCase() === "style") element.setAttribute("nonce", styleNonce)
    return element
  }
  const setAttribute = Element.prototype.setAttribute
  Element.prototype.setAttribute = function(name, value) {
    if (String(name).toLowerCase() === "style") this.style.cssText = String(value)
    else setAttribute.call(this, name, value)
  }
  const $ = (id) => document.getElementById(id)
  const wsUrl = (path) => (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path
  const state = {
    sessions: [],
    selected: undefined,
    socket: undefined,
    term: undefined,
    fit: undefined,
    control: null,
    mine: false,
    lastInput: 0
  }

  const personField = $("person")
  personField.value = localStorage.getItem("agent-terminal.person") || "person"
  const personName = () => (personField.value.trim().slice(0, 64).replace(/[^A-Za-z0-9._@-]/g, "-") || "person")
  personField.addEventListener("change", () => {
    localStorage.setItem("agent-terminal.person", personName())
    if (state.selected !== undefined) select(state.selected)
  })

  const el = (tag, attributes, ...children) => {
    const node = document.createElement(tag)
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === "className") node.className = value
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value)
      else node.setAttribute(key, value)
    }
    for (const child of children) node.append(child)
    return node
  }
  const time = (ms) => new Date(ms).toLocaleTimeString()
  const statusText = (status) =>
    status._tag === "running"
      ? "running"
      : "exited " + (status.signal !== null ? status.signal : status.exitCode)

  // The server's own terminal already answered every query in the stream: a browser terminal must not
  // answer again (its answers would be typed into the program).
  const quiet = (term) => {
    const swallow = () => true
    const csi = [
      { final: "c" },
      { prefix: ">", final: "c" },
      { prefix: "=", final: "c" },
      { final: "n" },
      { prefix: "?", final: "n" },
      { final: "t" },
      { prefix: ">", final: "q" },
      { intermediates: "$", final: "p" },
      { prefix: "?", intermediates: "$", final: "p" }
    ]
    for (const id of csi) term.parser.registerCsiHandler(id, swallow)
    term.parser.registerDcsHandler({ intermediates: "$", final: "q" }, swallow)
    for (const code of [4, 10, 11, 12]) term.parser.registerOscHandler(code, (data) => data.includes("?"))
  }

  // ---- the list and the requests ----
  const renderList = () => {
    const body = $("sessions").tBodies[0]
    body.replaceChildren(...state.sessions.map((session) => {
      const flags = []
      // the machine of the fleet it lives on (a server of the whole fleet shows every machine's terminals)
      if (session.machine) {
        flags.push(el("span", { className: "flag machine", "data-machine": session.machine }, session.machine))
      }
      if (session.status._tag !== "running") flags.push(el("span", { className: "flag exited" }, "exited"))
      if (session.busy) flags.push(el("span", { className: "flag busy" }, "busy"))
      if (session.waitingForInput) flags.push(el("span", { className: "flag waiting" }, "waits for input"))
      if (session.control) flags.push(el("span", { className: "flag control" }, session.control.holder))
      if (session.requests.length > 0) flags.push(el("span", { className: "flag request" }, "asks for a person"))
      const row = el(
        "tr",
        { "data-session": session.sessionId, onclick: () => select(session.sessionId) },
        el("td", {}, session.name, ...flags),
        el("td", {}, session.owner),
        el("td", {}, statusText(session.status)),
        el("td", {}, session.foreground ? session.foreground.command : ""),
        el("td", {}, session.cwd || "")
      )
      if (session.sessionId === state.selected) row.className = "selected"
      return row
    }))
    $("count").textContent = "(" + state.sessions.length + ")"
  }

  const renderRequests = () => {
    const box = $("requests")
    const pending = state.sessions.flatMap((session) => session.requests.map((request) => ({ session, request })))
    box.hidden = pending.length === 0
    box.replaceChildren(...pending.map(({ request, session }) =>
      el(
        "div",
        { className: "request", "data-task": request.taskId },
        el("strong", {}, "⚑ " + request.owner + " asks for a person on " + session.name + ":"),
        el("span", { className: "reason" }, request.reason),
        el("button", { type: "button", onclick: () => select(session.sessionId) }, "Open")
      )
    ))
  }

  const connectEvents = () => {
    const badge = $("connection")
    const socket = new WebSocket(wsUrl("/live/events"))
    socket.onopen = () => {
      badge.textContent = "live"
      badge.className = "badge live"
    }
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data)
      if (message.type !== "sessions") return
      state.sessions = message.sessions
      renderList()
      renderRequests()
      const current = state.sessions.find((session) => session.sessionId === state.selected)
      if (current !== undefined && !state.mine) setControl(current.control || null)
    }
    socket.onclose = () => {
      badge.textContent = "disconnected"
      badge.className = "badge down"
      setTimeout(connectEvents, 1000)
    }
  }

  // ---- one terminal ----
  const send = (message) => {
    if (state.socket !== undefined && state.socket.readyState === WebSocket.OPEN) {
      state.socket.send(JSON.stringify(message))
    }
  }

  const fitToWindow = () => {
    if (!state.mine || state.fit === undefined) return
    const size = state.fit.proposeDimensions()
    if (size && size.cols >= 20 && size.rows >= 5 && (size.cols !== state.term.cols || size.rows !== state.term.rows)) {
      send({ type: "resize", cols: size.cols, rows: size.rows })
    }
  }

  const renderLease = () => {
    const lease = $("lease")
    const control = state.control
    if (control === null) lease.textContent = state.selected === undefined ? "" : "the agent has the keyboard"
    else if (state.mine) {
      const left = Math.max(0, Math.round((state.lastInput + control.idleMs - Date.now()) / 1000))
      lease.textContent = "you hold the control: it goes back to the agent after " + left + " s without input"
    } else lease.textContent = "held by " + control.holder + " since " + time(control.since)
  }

  const setControl = (control) => {
    state.control = control
    // the server says who this socket is (its sign-in), whatever name it gave
    const mine = control !== null && control.holderId === state.person
    if (mine && !state.mine) state.lastInput = Date.now()
    state.mine = mine
    $("take").disabled = state.selected === undefined || control !== null
    $("release").disabled = !mine
    $("controlbar").className = mine ? "held-by-me" : ""
    if (state.term !== undefined) state.term.options.disableStdin = !mine
    renderLease()
    if (mine) {
      fitToWindow()
      state.term.focus()
    }
  }

  const select = (id) => {
    if (state.socket !== undefined) {
      state.socket.onclose = null
      state.socket.close()
    }
    if (state.term !== undefined) state.term.dispose()
    state.selected = id
    state.mine = false
    const session = state.sessions.find((candidate) => candidate.sessionId === id)
    $("title").textContent = session
      ? session.name + " · " + session.owner + (session.machine ? " · on " + session.machine : "")
      : id
    $("state").textContent = ""
    const term = new Terminal({ scrollback: 5000, fontSize: 13, disableStdin: true, allowProposedApi: true })
    const fit = new FitAddon.FitAddon()
    term.loadAddon(fit)
    term.open($("terminal"))
    quiet(term)
    state.term = term
    state.fit = fit
    window.liveTerm = term
    term.onData((data) => {
      if (!state.mine) return
      state.lastInput = Date.now()
      send({ type: "input", data })
    })
    const socket = new WebSocket(
      wsUrl("/live/terminal/" + encodeURIComponent(id) + "?person=" + encodeURIComponent(personName()))
    )
    socket.binaryType = "arraybuffer"
    state.socket = socket
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") {
        term.write(new Uint8Array(event.data))
        return
      }
      const message = JSON.parse(event.data)
      switch (message.type) {
        case "snapshot":
          state.person = message.person
          term.resize(message.cols, message.rows)
          term.write(message.data)
          if (message.pending) term.write(Uint8Array.from(atob(message.pending), (c) => c.charCodeAt(0)))
          $("state").textContent = statusText(message.status)
          setControl(message.control)
          $("terminal").dataset.ready = "true"
          break
        case "resized":
          term.resize(message.cols, message.rows)
          break
        case "exited":
          $("state").textContent = "exited " + (message.signal !== null ? message.signal : message.exitCode)
          break
        case "dropped":
          $("state").textContent = "fell behind; reconnecting"
          setTimeout(() => select(id), 300)
          break
        case "control":
          setControl(message.control)
          if (message.note) $("state").textContent = "handed back"
          loadAudit()
          break
        case "error":
          $("state").textContent = message.tag + ": " + message.message
          break
      }
    }
    socket.onclose = () => {
      $("state").textContent = "disconnected"
    }
    renderList()
    loadAudit()
  }

  $("take").addEventListener("click", () => send({ type: "take" }))
  $("release").addEventListener("click", () => send({ type: "release" }))
  window.addEventListener("resize", fitToWindow)
  setInterval(renderLease, 1000)

  // ---- the audit ----
  const loadAudit = async () => {
    const id = state.selected
    if (id === undefined) return
    const answer = await fetch("/live/audit/" + encodeURIComponent(id), { credentials: "same-origin" })
    if (!answer.ok || id !== state.selected) return
    const entries = await answer.json()
    $("audit").tBodies[0].replaceChildren(
      ...entries.slice().reverse().map((entry) =>
        el(
          "tr",
          {},
          el("td", {}, time(entry.at)),
          el("td", {}, entry.actor),
          el("td", {}, entry.action),
          el("td", {}, entry.detail || "")
        )
      )
    )
  }
  setInterval(() => {
    if ($("audit-panel").open) void loadAudit()
  }, 2000)

  // ---- recordings and the player ----
  const loadRecordings = async () => {
    const answer = await fetch("/live/recordings", { credentials: "same-origin" })
    if (!answer.ok) return
    const recordings = await answer.json()
    $("recordings").tBodies[0].replaceChildren(...recordings.map((recording) =>
      el(
        "tr",
        { "data-recording": recording.name },
        el(
          "td",
          {},
          recording.sessionId,
          ...(recording.machine
            ? [el("span", { className: "flag machine", "data-machine": recording.machine }, recording.machine)]
            : []),
          el("br"),
          time(recording.startedAt)
        ),
        el("td", {}, Math.max(1, Math.round(recording.bytes / 1024)) + " KiB"),
        el(
          "td",
          {},
          el(
            "a",
            { href: "/live/recordings/" + encodeURIComponent(recording.name), download: recording.name },
            "Download"
          ),
          " ",
          el("button", { type: "button", className: "replay", onclick: () => player.load(recording.name) }, "Replay")
        )
      )
    ))
  }
  setInterval(loadRecordings, 5000)

  const player = {
    events: [],
    header: undefined,
    term: undefined,
    index: 0,
    position: 0,
    playing: false,
    last: 0,
    get duration() {
      return this.events.length === 0 ? 0 : this.events[this.events.length - 1][0]
    },
    async load(name) {
      const answer = await fetch("/live/recordings/" + encodeURIComponent(name), { credentials: "same-origin" })
      if (!answer.ok) return
      const lines = (await answer.text()).split("\n").filter((line) => line !== "")
      this.header = JSON.parse(lines[0])
      this.events = lines.slice(1).flatMap((line) => {
        try {
          const event = JSON.parse(line)
          return Array.isArray(event) && event.length === 3 ? [event] : []
        } catch {
          return []
        }
      })
      if (this.term !== undefined) this.term.dispose()
      this.term = new Terminal({
        cols: this.header.width,
        rows: this.header.height,
        disableStdin: true,
        scrollback: 5000
      })
      this.term.open($("replay"))
      quiet(this.term)
      window.replayTerm = this.term
      $("player").hidden = false
      $("player-title").textContent = name
      this.seek(0)
      this.play()
    },
    apply(upTo) {
      while (this.index < this.events.length && this.events[this.index][0] <= upTo) {
        const [, code, data] = this.events[this.index++]
        if (code === "o") this.term.write(data)
        else if (code === "r") {
          const [cols, rows] = data.split("x").map(Number)
          if (cols > 0 && rows > 0) this.term.resize(cols, rows)
        }
      }
      const node = $("player")
      node.dataset.frame = String(this.index)
      node.dataset.frames = String(this.events.length)
      $("clock").textContent = this.position.toFixed(1) + " / " + this.duration.toFixed(1) + " s"
      $("seek").value = String(this.duration === 0 ? 1000 : Math.round((this.position / this.duration) * 1000))
      if (this.index >= this.events.length) {
        this.playing = false
        // the last frame is on the screen once xterm has parsed everything written before it
        this.term.write("", () => {
          if (this.index >= this.events.length) node.dataset.state = "ended"
        })
      }
    },
    seek(seconds) {
      this.term.reset()
      this.term.resize(this.header.width, this.header.height)
      this.index = 0
      this.position = Math.max(0, Math.min(seconds, this.duration))
      $("player").dataset.state = this.playing ? "playing" : "paused"
      this.apply(this.position)
    },
    play() {
      if (this.index >= this.events.length) this.seek(0)
      this.playing = true
      this.last = performance.now()
      $("player").dataset.state = "playing"
      const step = () => {
        if (!this.playing) return
        const now = performance.now()
        this.position += ((now - this.last) / 1000) * Number($("speed").value)
        this.last = now
        this.apply(this.position)
        if (this.playing) setTimeout(step, 16)
      }
      step()
    },
    pause() {
      this.playing = false
      $("player").dataset.state = "paused"
    }
  }
  $("play").addEventListener("click", () => player.play())
  $("pause").addEventListener("click", () => player.pause())
  $("seek").addEventListener("input", () => {
    const wasPlaying = player.playing
    player.playing = false
    player.seek((Number($("seek").value) / 1000) * player.duration)
    if (wasPlaying) player.play()
  })
  $("close-player").addEventListener("click", () => {
    player.pause()
    $("player").hidden = true
  })
  $("logout").addEventListener("click", async () => {
    await fetch("/live/logout", { method: "POST", credentials: "same-origin" })
    location.replace("/")
  })

  connectEvents()
  void loadRecordings()
})()
