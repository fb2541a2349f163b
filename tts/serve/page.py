"""The page ``tts serve`` shows at ``/``: type text, choose a voice and a vocoder, listen, and see the
alignment and mel figure of what was said with its warnings (step-limit hits, skips, repeats)."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tts</title>
<style>
body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
textarea{width:100%;font-size:1.05em}
#warnings{color:#b00}
img{max-width:100%;margin-top:1em}
</style></head>
<body>
<h1>Text to speech</h1>
<textarea id="text" rows="4" maxlength="2000">The quick brown fox jumps over the lazy dog.</textarea>
<p>
<label>voice <select id="voice"></select></label>
<label>vocoder <select id="vocoder"></select></label>
<button id="speak">Speak</button> <span id="status"></span>
</p>
<ul id="warnings"></ul>
<audio id="audio" controls></audio>
<div><img id="figure" alt=""></div>
<script>
const voices = {};
async function load() {
  const health = await (await fetch("/health")).json();
  Object.assign(voices, health.voices);
  const voice = document.getElementById("voice");
  for (const name of Object.keys(voices)) voice.add(new Option(name, name));
  voice.value = health.default_voice;
  fillVocoders();
  voice.onchange = fillVocoders;
}
function fillVocoders() {
  const vocoder = document.getElementById("vocoder");
  vocoder.innerHTML = "";
  for (const name of voices[document.getElementById("voice").value]) vocoder.add(new Option(name, name));
}
async function speak() {
  const status = document.getElementById("status"), warnings = document.getElementById("warnings");
  status.textContent = "speaking…";
  warnings.innerHTML = "";
  const body = {text: document.getElementById("text").value, voice: document.getElementById("voice").value,
                vocoder: document.getElementById("vocoder").value};
  const response = await fetch("/synthesize?format=json",
                               {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const answer = await response.json();
  if (!response.ok) { status.textContent = "error: " + answer.error; return; }
  document.getElementById("audio").src = "data:audio/wav;base64," + answer.audio;
  document.getElementById("figure").src = "data:image/png;base64," + answer.figure;
  for (const warning of answer.warnings) {
    warnings.appendChild(Object.assign(document.createElement("li"), {textContent: warning}));
  }
  status.textContent = answer.seconds.toFixed(2) + " s of audio";
}
document.getElementById("speak").onclick = speak;
load();
</script>
</body></html>
"""
